r"""One ignore file's text as rules deciding a single path (R-I1), each pattern translated as git's wildmatch reads it.

git matches a pattern against one path, never looking below an excluded folder (content.ignore combines the levels):
- a pattern with no '/' but a trailing one is matched against the path's last name, any other against the whole
  path below the ignore file's folder (a leading '/' only anchors it); a trailing '/' means folders only;
- `?`, `*` and brackets never match a '/' in a path pattern; `**` is "any folders" only as a whole segment
  (`**/x`, `a/**/b`, `a/**`), elsewhere it is `*`; a bracket may hold a '/' (which makes it a path pattern)
  but never matches one, `[!..]`/`[^..]` negate, `]` first is literal, a reversed range `[z-a]` matches only
  its first character, POSIX classes (`[[:alpha:]]`) are ASCII, `\x` escapes x, an unclosed bracket or an
  unknown class matches nothing;
- git compares the literal head of a path pattern as text and runs wildmatch on the rest, so in `a**/x.md` the
  `**/` counts as leading: it matches `ax.md` and `ab/c/x.md` (dir.c match_pathname);
- matching is on bytes: `?` is one byte of a UTF-8 name. Paths and patterns are compared as latin-1 views of
  their UTF-8 bytes, so a Python regex sees one character per byte;
- only unescaped trailing spaces are trimmed (not tabs), a CR before the LF is dropped, `#` starts a comment and
  `\#`, `\!` are literal.

pathspec (an earlier version of this module used its translation) reads POSIX classes, a '/' inside brackets,
reversed ranges, `a**/x`, `***`, a negated bracket before a '/' and trailing tabs unlike git; issue 13 asked for
git's answers, so the translation is done here and tests/test_ignore.py compares it with `git check-ignore`.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass

IGNORE_FILE_MAX_BYTES = 8 * 1024 * 1024  # an ignore file larger than this is read only up to here
UTF8_BOM = b"\xef\xbb\xbf"
WILDCARDS = "*?[\\"  # git's simple_length stops at the first of these
NEVER = "(?!)"
# git's sane_ctype classes (ASCII only), as regex set contents
POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \t",
    "cntrl": "\x00-\x1f\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \t\n\x0b\x0c\r",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


def as_bytes_text(text: str) -> str:
    """A str whose characters are the UTF-8 bytes of `text` (its file-name decoding undone): git matches bytes."""
    return text if text.isascii() else text.encode("utf-8", "surrogateescape").decode("latin-1")


@dataclass(frozen=True, slots=True)
class Rule:
    """One pattern as a regex over the path below the base (or over its last name), made as git's wildmatch reads it."""

    regex: re.Pattern[str]
    negated: bool
    dir_only: bool
    basename: bool  # the pattern has no '/': it is matched against the last name of the path

    def matches(self, rel: str, is_dir: bool) -> bool:
        """Does the pattern match the path itself (`rel` already as_bytes_text)?"""
        if self.dir_only and not is_dir:
            return False
        return self.regex.match(rel.rpartition("/")[2] if self.basename else rel) is not None


@dataclass(frozen=True, slots=True)
class RuleFile:
    """The patterns of one ignore file, relative to the folder `base` ("" = root), and how to name it."""

    reason: str
    base: str
    rules: tuple[Rule, ...]
    any_name: re.Pattern[str] | None  # quick pre-checks: a match of any name rule implies a match of this
    any_path: re.Pattern[str] | None  # ... and of any path rule this

    @classmethod
    def build(cls, reason: str, base: str, rules: tuple[Rule, ...]) -> RuleFile:
        def union(chosen: list[Rule]) -> re.Pattern[str] | None:
            return _compile("|".join(f"(?:{rule.regex.pattern})" for rule in chosen)) if chosen else None

        return cls(
            reason,
            base,
            rules,
            union([rule for rule in rules if rule.basename]),
            union([rule for rule in rules if not rule.basename]),
        )

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """True = ignored, False = re-included by a negation, None = no pattern here matches."""
        sub = as_bytes_text(rel[len(self.base) + 1 :] if self.base else rel)
        name_hit = self.any_name is not None and self.any_name.match(sub.rpartition("/")[2]) is not None
        path_hit = self.any_path is not None and self.any_path.match(sub) is not None
        if not name_hit and not path_hit:
            return None
        for rule in reversed(self.rules):
            if (name_hit if rule.basename else path_hit) and rule.matches(sub, is_dir):
                return not rule.negated
        return None


def _compile(source: str) -> re.Pattern[str] | None:
    try:
        return re.compile(source, re.DOTALL)  # DOTALL: a '\n' in a name is still part of a name
    except (re.error, RecursionError, OverflowError):
        return None


class _Abort(Exception):
    """wildmatch's WM_ABORT_ALL inside a bracket (it never closes, a class is unknown): the bracket matches nothing."""


def _escaped(pattern: str, i: int) -> str:
    """The character a backslash at pattern[i - 1] escapes."""
    if i >= len(pattern):
        raise _Abort
    return pattern[i]


def _posix_class(pattern: str, i: int) -> tuple[str | None, int]:
    """At "[:" (pattern[i] == '['): the class's set contents and the index of its ']', or None (a plain '[')."""
    close = pattern.find("]", i + 2)
    if close < 0:
        raise _Abort
    name = pattern[i + 2 : close]
    if not name.endswith(":"):  # no ":]": the '[' is an ordinary character
        return None, i
    contents = POSIX_CLASSES.get(name[:-1])
    if contents is None:
        raise _Abort
    return contents, close


def _bracket_items(pattern: str, i: int) -> tuple[list[str], int]:
    """The set items of a bracket whose contents start at pattern[i], and the index of its closing ']'."""
    items: list[str] = []
    prev: str | None = None  # wildmatch's prev_ch: what a '-' would start a range from
    first = True
    while True:
        if i >= len(pattern):
            raise _Abort
        ch = pattern[i]
        if ch == "]" and not first:
            return items, i
        first = False
        if ch == "\\":
            i += 1
            prev = _escaped(pattern, i)
            items.append(re.escape(prev))
        elif ch == "-" and prev is not None and i + 1 < len(pattern) and pattern[i + 1] != "]":
            i += 1
            end = pattern[i]
            if end == "\\":
                i += 1
                end = _escaped(pattern, i)
            if prev <= end:  # a reversed range adds nothing: its first character is already in
                items.append(f"{re.escape(prev)}-{re.escape(end)}")
            prev = None
        elif ch == "[" and pattern[i + 1 : i + 2] == ":":
            contents, i = _posix_class(pattern, i)
            items.append(contents if contents is not None else re.escape("["))
            prev = None if contents is not None else "["
        else:
            items.append(re.escape(ch))
            prev = ch
        i += 1


def _bracket(pattern: str, i: int) -> tuple[str, int]:
    """The regex set for the bracket opening at pattern[i] (wildmatch's '[' case), never matching '/', and the index
    after it; NEVER and the end of the pattern when wildmatch would abort there."""
    i += 1
    negated = pattern[i : i + 1] in ("!", "^")
    try:
        items, close = _bracket_items(pattern, i + 1 if negated else i)
    except _Abort:
        return NEVER, len(pattern)
    body = "".join(items)
    if negated:
        return f"[^/{body}]", close + 1
    return f"(?!/)[{body}]", close + 1


def wildmatch_regex(pattern: str, *, pathname: bool) -> str:
    """git's wildmatch(pattern, text, WM_PATHNAME if `pathname`) as a regex source matching the whole text."""
    out: list[str] = []
    i = 0
    any_char = "[^/]" if pathname else "."
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*":
            start = i
            while i < len(pattern) and pattern[i] == "*":
                i += 1
            stars = i - start
            after = pattern[i : i + 2]
            whole_segment = (start == 0 or pattern[start - 1] == "/") and (
                i == len(pattern) or after[:1] == "/" or after == "\\/"
            )
            if not pathname:
                out.append(".*")
            elif stars >= 2 and whole_segment:
                if after[:1] == "/":
                    out.append("(?:.*/)?")  # "**/": any folders, none included
                    i += 1
                else:
                    out.append(".*")
            else:
                out.append("[^/]*")
            continue
        if ch == "?":
            out.append(any_char)
        elif ch == "[":
            regex, i = _bracket(pattern, i)
            out.append(regex)  # never a '/': in a name there is none anyway
            continue
        elif ch == "\\":
            i += 1
            if i >= len(pattern):
                return NEVER  # a trailing backslash matches nothing
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out) + "\\Z"


def _trim_trailing_spaces(line: str) -> str:
    """git's trim_trailing_spaces: unescaped trailing spaces (not tabs) go."""
    last_space: int | None = None
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == " ":
            if last_space is None:
                last_space = i
        elif ch == "\\":
            i += 1
            if i >= len(line):
                return line
            last_space = None
        else:
            last_space = None
        i += 1
    return line if last_space is None else line[:last_space]


def compile_rule(line: str) -> Rule | None:
    """One line of an ignore file as a Rule, or None for blanks, comments and patterns that match nothing."""
    line = line.removesuffix("\r")
    if not line or line.startswith("#"):
        return None
    line = as_bytes_text(_trim_trailing_spaces(line))
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    dir_only = line.endswith("/")
    if dir_only:
        line = line[:-1]
    if not line:
        return None
    basename = "/" not in line
    if basename:
        source = wildmatch_regex(line, pathname=False)
    else:
        head = _simple_length(line)
        if line.startswith("/"):
            line, head = line[1:], max(0, head - 1)
        source = (
            re.escape(line[:head]) + wildmatch_regex(line[head:], pathname=True)
            if head < len(line)
            else (re.escape(line) + "\\Z")
        )
    regex = _compile(source)
    return None if regex is None else Rule(regex=regex, negated=negated, dir_only=dir_only, basename=basename)


def _simple_length(pattern: str) -> int:
    """git's simple_length: how many characters come before the first wildcard or backslash."""
    for i, ch in enumerate(pattern):
        if ch in WILDCARDS:
            return i
    return len(pattern)


def compile_rules(text: str) -> tuple[Rule, ...]:
    """Every rule of an ignore file's text, in file order."""
    rules = (compile_rule(line) for line in text.split("\n"))
    return tuple(rule for rule in rules if rule is not None)


def read_ignore_file(path: str, follow_symlinks: bool) -> str:
    """An ignore file's text ("" when absent, not a regular file, or unreadable); never blocks on a FIFO."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)  # git does not follow a symlinked .gitignore either
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError):
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        chunks: list[bytes] = []
        remaining = IGNORE_FILE_MAX_BYTES
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError:
        return ""
    finally:
        os.close(fd)
    data = b"".join(chunks).removeprefix(UTF8_BOM)
    return data.decode("utf-8", "surrogateescape")  # the same decoding os.scandir gives file names

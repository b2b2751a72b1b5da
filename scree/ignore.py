"""The ignore policy (R-I1) as one callable: a relative path in, the reason it is not indexed (or None) out.

What is skipped, in the order the reasons are reported: hidden paths (any component starting with "."),
anything below a skipped folder, files without a markdown extension, gitignored paths, nested repositories
(a folder with its own `.git`, file or folder) and paths matched by `.screeignore` files.

Gitignore follows `git check-ignore`: a `.gitignore` at every level, deeper files overriding shallower ones,
the last matching pattern within a file winning, `!` negations, anchored, directory-only and `**` patterns,
then `.git/info/exclude` (found through a `.git` file too, for worktrees), and no re-including a path below an
excluded folder. `core.excludesFile` and the global ignore file are deliberately not read: what gets indexed
must not depend on who runs scree. `.gitignore` files are honoured whether or not the folder is a repository.
`.screeignore` files use the same syntax and rules, as a second, separate set.

Patterns are compiled here, after git's dir.c and wildmatch.c, not by pathspec. pathspec's GitIgnoreSpec answers
"is this file ignored by one spec" with folder rules folded into each file's regex, so it cannot decide a folder
on its own (`foo/**` would prune `foo`, where git keeps `foo` so `!foo/keep.md` re-includes it) nor combine
levels as git does; and its globs differ from git's on POSIX classes (`[[:space:]]`), a '/' inside brackets,
reversed ranges and match_pathname's literal-lead quirk. tests/test_ignore.py checks the answers against
`git check-ignore` on random trees.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

GITIGNORE = ".gitignore"
SCREEIGNORE = ".screeignore"
GIT_DIR = ".git"
INFO_EXCLUDE = ".git/info/exclude"
DEFAULT_EXTENSIONS = (".md", ".markdown")  # R-I1
IGNORE_FILE_MAX_BYTES = 8 * 1024 * 1024  # an ignore file larger than this is read only up to here
UTF8_BOM = b"\xef\xbb\xbf"

HIDDEN = "hidden path"
NOT_MARKDOWN = "not a markdown file"
NOT_RELATIVE = "not a relative path inside the folder"

_GITIGNORE_KIND = "gitignore"
_SCREEIGNORE_KIND = "screeignore"


@dataclass(frozen=True, slots=True)
class Rule:
    """One compiled ignore pattern; `regex` is full-matched against the basename or the path below the base."""

    regex: re.Pattern[str]
    negated: bool
    dir_only: bool
    basename_only: bool

    def matches(self, rel: str, is_dir: bool) -> bool:
        """Does the pattern match the path itself (not merely one of its folders)?"""
        if self.dir_only and not is_dir:
            return False
        target = rel.rpartition("/")[2] if self.basename_only else rel
        return self.regex.fullmatch(target) is not None


@dataclass(frozen=True, slots=True)
class RuleFile:
    """The patterns of one ignore file, relative to the folder `base` ("" = root), and how to name it."""

    reason: str
    base: str
    rules: tuple[Rule, ...]
    any_rule: re.Pattern[str]  # a match of any rule implies this matches: a quick pre-check

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """True = ignored, False = re-included by a negation, None = no pattern here matches."""
        sub = rel[len(self.base) + 1 :] if self.base else rel
        if self.any_rule.fullmatch(sub) is None:
            return None
        for rule in reversed(self.rules):
            if rule.matches(sub, is_dir):
                return not rule.negated
        return None


def _trim_trailing_spaces(line: str) -> str:
    """git's trim_trailing_spaces: drop unescaped trailing spaces (tabs and escaped spaces stay)."""
    last_space = -1
    i = 0
    while i < len(line):
        char = line[i]
        if char == " ":
            if last_space < 0:
                last_space = i
        elif char == "\\":
            i += 1
            if i >= len(line):
                return line
            last_space = -1
        else:
            last_space = -1
        i += 1
    return line if last_space < 0 else line[:last_space]


# git's character classes, ASCII only as in git's own ctype (its isspace has no \v or \f).
POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\n\\r",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


def _bracket_member(glob: str, i: int) -> tuple[str, str | None, int] | None:
    """One member of a bracket expression at `i`: (regex, the literal it is or None, index after it)."""
    char = glob[i]
    if char == "\\":
        if i + 1 >= len(glob):
            return None
        return re.escape(glob[i + 1]), glob[i + 1], i + 2
    if char == "[" and glob.startswith(":", i + 1):
        close = glob.find("]", i + 2)
        if close < 0:
            return None
        if close - 1 >= i + 2 and glob[close - 1] == ":":
            posix = POSIX_CLASSES.get(glob[i + 2 : close - 1])
            return None if posix is None else (posix, None, close + 1)
        # No ":]" before the next "]": the '[' is a plain member.
    return re.escape(char), char, i + 1


def _bracket_regex(glob: str, start: int) -> tuple[str, int] | None:
    """The bracket expression opening just before `start`, as wildmatch.c reads it: (regex, index after it).

    None when git would abort the match (no closing bracket, an unknown [:class:]). As with WM_PATHNAME, the
    class never matches a '/'.
    """
    end = len(glob)
    i = start
    negated = i < end and glob[i] in "!^"
    if negated:
        i += 1
    items: list[str] = []
    prev: str | None = None  # the previous literal, which a following '-' makes a range start
    first = True
    while True:
        if i >= end:
            return None
        if glob[i] == "]" and not first:
            break
        first = False
        if glob[i] == "-" and prev is not None and i + 1 < end and glob[i + 1] != "]":
            i += 2 if glob[i + 1] == "\\" else 1
            if i >= end:
                return None
            # The start was already a member on its own: git's "[z-a]" still matches "z".
            if prev <= glob[i]:
                items.append(f"{re.escape(prev)}-{re.escape(glob[i])}")
            prev = None
            i += 1
            continue
        member = _bracket_member(glob, i)
        if member is None:
            return None
        regex, prev, i = member
        items.append(regex)
    body = "".join(items)
    if negated:
        return f"[^/{body}]", i + 1
    return (f"(?!/)[{body}]" if body else "(?!)"), i + 1


def glob_regex(glob: str) -> str | None:
    """One path segment's glob as a regex, by git's wildmatch.c; None when git would never match it.

    `*` (any run of stars inside a segment) and `?` stop at '/', a backslash makes the next character literal,
    a trailing backslash or a broken bracket makes the pattern match nothing.
    """
    out: list[str] = []
    i = 0
    end = len(glob)
    while i < end:
        char = glob[i]
        if char == "\\":
            if i + 1 >= end:
                return None
            out.append(re.escape(glob[i + 1]))
            i += 2
        elif char == "*":
            while i < end and glob[i] == "*":
                i += 1
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            bracket = _bracket_regex(glob, i + 1)
            if bracket is None:
                return None
            regex, i = bracket
            out.append(regex)
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


def _split_segments(body: str) -> list[str] | None:
    """Split a pattern at each '/' outside a bracket expression ("\\/" is a '/' too, as in wildmatch.c).

    A bracket may hold a '/' ("[x/y]"): it stays one member of its segment. None when a bracket never closes,
    which makes git's match fail wherever it is.
    """
    segments: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(body):
        if body[i] == "/" or body.startswith("\\/", i):
            segments.append("".join(current))
            current = []
            i += 1 if body[i] == "/" else 2
            continue
        step = 2 if body[i] == "\\" else 1
        if body[i] == "[":
            bracket = _bracket_regex(body, i + 1)
            if bracket is None:
                return None
            step = bracket[1] - i
        current.append(body[i : i + step])
        i += step
    segments.append("".join(current))
    # A segment of stars only is "**" (git reads any run of two or more as one).
    return ["**" if len(seg) > 1 and seg.strip("*") == "" else seg for seg in segments]


def _path_regex(body: str) -> str | None:
    """wildmatch with WM_PATHNAME for a pattern with a '/': "**" segments span folders, others stay in one."""
    segments = _split_segments(body)
    if segments is None:
        return None
    if segments == ["**"]:
        return ".*"
    out: list[str] = []
    last = len(segments) - 1
    for i, segment in enumerate(segments):
        after_stars = i > 0 and segments[i - 1] == "**"  # the "**" before already took the '/'
        if segment == "**":
            if i == 0:
                out.append("(?:.*/)?")
            elif i == last:
                out.append(".*" if after_stars else "/.*")
            else:
                out.append("(?:.*/)?" if after_stars else "/(?:.*/)?")
            continue
        regex = glob_regex(segment)
        if regex is None:
            return None
        out.append(regex if i == 0 or after_stars else "/" + regex)
    return "".join(out)


def _pathname_regex(body: str) -> str | None:
    """A pattern with a '/' as git's match_pathname applies it, quirk included.

    git compares the literal lead of a pattern ("a" in "a**/x") as plain text and hands only the rest to
    wildmatch, where a "**" that now starts the pattern counts as a leading "**/": so "a**/x" matches "ax",
    "a/x" and "ab/c/x", and "a/b**" matches everything below "a/" whose name starts with "b".
    """
    special = re.search(r"[*?\[\\]", body)
    cut = special.start() if special else -1
    if cut > 0 and body[cut - 1] != "/" and body.startswith("**", cut):
        rest = body[cut:].lstrip("*")
        if not rest:
            return re.escape(body[:cut]) + ".*"
        if rest.startswith("/"):
            tail = _path_regex(rest[1:])
            return None if tail is None else re.escape(body[:cut]) + "(?:.*/)?" + tail
    return _path_regex(body)


def compile_rule(line: str) -> Rule | None:
    """One line of an ignore file as a Rule, or None for blanks, comments and patterns git discards."""
    line = _trim_trailing_spaces(line.removesuffix("\r"))
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    body = line[1:] if negated else line
    dir_only = body.endswith("/")
    if dir_only:
        body = body[:-1]
    if not body:
        return None
    basename_only = "/" not in body
    body = body.removeprefix("/")
    source = glob_regex(body) if basename_only else _pathname_regex(body)
    if source is None:
        return None
    regex = re.compile(source, re.DOTALL)
    return Rule(regex=regex, negated=negated, dir_only=dir_only, basename_only=basename_only)


def compile_rules(text: str) -> tuple[Rule, ...]:
    """Every rule of an ignore file's text, in file order."""
    rules = (compile_rule(line) for line in text.split("\n"))
    return tuple(rule for rule in rules if rule is not None)


def _any_rule_regex(rules: tuple[Rule, ...]) -> re.Pattern[str]:
    """A regex every path matched by one of `rules` also matches (it may match more; the rules then decide)."""
    parts = [f"(?:.*/)?(?:{r.regex.pattern})" if r.basename_only else f"(?:{r.regex.pattern})" for r in rules]
    return re.compile("|".join(parts) or "(?!)", re.DOTALL)


def _read_ignore_file(path: str, follow_symlinks: bool) -> str:
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


def _git_common_dir(root: Path) -> Path | None:
    """The folder holding info/exclude: `.git`, or for a worktree the common dir its `.git` file points to."""
    dot_git = root / GIT_DIR
    if dot_git.is_dir():
        return dot_git
    text = _read_ignore_file(str(dot_git), follow_symlinks=True).strip()
    if not text.startswith("gitdir:"):
        return None
    git_dir = (root / text.removeprefix("gitdir:").strip()).resolve()
    common = _read_ignore_file(str(git_dir / "commondir"), follow_symlinks=True).strip()
    return (git_dir / common).resolve() if common else git_dir


def _parent(rel: str) -> str:
    return rel.rpartition("/")[0]


class IgnorePolicy:
    """Callable: relative posix path -> reason string or None (None = indexable). Front matter is not read here."""

    def __init__(self, root: Path, extensions: tuple[str, ...] = DEFAULT_EXTENSIONS) -> None:
        self.root = root
        self.extensions = tuple(ext.lower() for ext in extensions)
        self._root_str = str(root)
        self._dir_reasons: dict[str, str | None] = {}
        self._chains: dict[tuple[str, str], tuple[RuleFile, ...]] = {}
        self._info_exclude: tuple[RuleFile, ...] | None = None

    def __call__(self, rel: str, is_dir: bool = False) -> str | None:
        """Why `rel` (relative, '/'-separated) is not indexed, or None; `is_dir` says it names a folder."""
        if rel.endswith("/") and rel != "/":  # "docs/" names a folder
            rel, is_dir = rel.rstrip("/"), True
        if rel in ("", "."):
            return None if is_dir else NOT_RELATIVE
        parts = rel.split("/")
        if rel.startswith("/") or "" in parts:
            return NOT_RELATIVE
        if any(part.startswith(".") for part in parts):
            return HIDDEN
        if is_dir:
            return self.dir_ignored(rel)
        parent = _parent(rel)
        reason = self.dir_ignored(parent) if parent else None
        if reason is not None:
            return reason
        if not parts[-1].lower().endswith(self.extensions):
            return NOT_MARKDOWN
        return self._git_reason(rel, False) or self._scree_reason(rel, False)

    def dir_ignored(self, rel_dir: str) -> str | None:
        """Why the folder (and so everything below it) is skipped; "" is the root, never skipped."""
        if not rel_dir:
            return None
        reasons = self._dir_reasons
        if rel_dir in reasons:
            return reasons[rel_dir]
        # Top-down from the shallowest uncached folder, so a deep path never recurses.
        reason: str | None = None
        prefix = ""
        for name in rel_dir.split("/"):
            prefix = f"{prefix}/{name}" if prefix else name
            if prefix in reasons:
                reason = reasons[prefix]
            else:
                reason = reason or self._own_dir_reason(prefix)
                reasons[prefix] = reason
        return reason

    def _own_dir_reason(self, rel_dir: str) -> str | None:
        name = rel_dir.rpartition("/")[2]
        if name.startswith("."):
            return HIDDEN
        reason = self._git_reason(rel_dir, True)
        if reason is None and os.path.lexists(os.path.join(self._root_str, rel_dir, GIT_DIR)):
            reason = f"inside nested repository {rel_dir}/"
        return reason or self._scree_reason(rel_dir, True)

    def _git_reason(self, rel: str, is_dir: bool) -> str | None:
        for rule_file in (*self._chain(_parent(rel), _GITIGNORE_KIND), *self._exclude_file()):
            decision = rule_file.decide(rel, is_dir)
            if decision is not None:
                return rule_file.reason if decision else None
        return None

    def _scree_reason(self, rel: str, is_dir: bool) -> str | None:
        for rule_file in self._chain(_parent(rel), _SCREEIGNORE_KIND):
            decision = rule_file.decide(rel, is_dir)
            if decision is not None:
                return rule_file.reason if decision else None
        return None

    def _chain(self, rel_dir: str, kind: str) -> tuple[RuleFile, ...]:
        """The ignore files of one kind that apply inside `rel_dir`, deepest first."""
        key = (rel_dir, kind)
        chain = self._chains.get(key)
        if chain is None:
            above = self._chain(_parent(rel_dir), kind) if rel_dir else ()
            own = self._load(rel_dir, kind)
            chain = (own, *above) if own is not None else above
            self._chains[key] = chain
        return chain

    def _load(self, rel_dir: str, kind: str) -> RuleFile | None:
        name = GITIGNORE if kind == _GITIGNORE_KIND else SCREEIGNORE
        rel_file = f"{rel_dir}/{name}" if rel_dir else name
        rules = compile_rules(_read_ignore_file(os.path.join(self._root_str, rel_file), follow_symlinks=False))
        if not rules:
            return None
        verb = "gitignored by" if kind == _GITIGNORE_KIND else "excluded by"
        return RuleFile(reason=f"{verb} {rel_file}", base=rel_dir, rules=rules, any_rule=_any_rule_regex(rules))

    def _exclude_file(self) -> tuple[RuleFile, ...]:
        if self._info_exclude is None:
            common = _git_common_dir(self.root)
            text = _read_ignore_file(str(common / "info" / "exclude"), follow_symlinks=True) if common else ""
            rules = compile_rules(text)
            rule_file = RuleFile(f"excluded by {INFO_EXCLUDE}", "", rules, _any_rule_regex(rules))
            self._info_exclude = (rule_file,) if rules else ()
        return self._info_exclude

    def walk(self) -> Iterator[str]:
        """Every indexable path, sorted; ignored folders are never entered, symlinked folders never followed.

        Every non-folder entry the policy accepts is yielded (a symlink or FIFO named x.md too): whether it is a
        regular file is scree.files' job, which says why it refuses one.
        """
        for rel, is_dir in self._traverse(with_files=True):
            if not is_dir:
                yield rel

    def walk_dirs(self) -> Iterator[str]:
        """Every folder that is not skipped, the root ("") first, parents before children: where watches go."""
        for rel, _ in self._traverse(with_files=False):
            yield rel

    def _traverse(self, with_files: bool) -> Iterator[tuple[str, bool]]:
        """Depth-first over kept folders (and files), in sorted path order, without recursion."""
        yield "", True
        stack = [iter(self._entries(""))]
        while stack:
            entry = next(stack[-1], None)
            if entry is None:
                stack.pop()
                continue
            rel, is_dir = entry
            if is_dir:
                if self.dir_ignored(rel) is None:
                    yield rel, True
                    stack.append(iter(self._entries(rel)))
            elif with_files and self(rel) is None:
                yield rel, False

    def _entries(self, rel_dir: str) -> list[tuple[str, bool]]:
        """A folder's entries as (relative path, is a real folder), sorted so the walk yields sorted paths."""
        prefix = rel_dir + "/" if rel_dir else ""
        found: list[tuple[str, bool]] = []
        try:
            with os.scandir(os.path.join(self._root_str, rel_dir)) as it:
                for entry in it:
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        continue
                    found.append((prefix + entry.name, is_dir))
        except OSError:
            return []
        # "a/" sorts after "a.md" like the full paths "a/x.md" do, so depth-first order is sorted order.
        found.sort(key=lambda item: item[0] + "/" if item[1] else item[0])
        return found

    def is_ignore_file(self, rel: str) -> bool:
        """Does a change to this path change the rules? (.gitignore, .screeignore, .git/info/exclude, a `.git`.)

        A `.git` appearing or going anywhere below the root makes or unmakes a nested repository.
        """
        name = rel.rpartition("/")[2]
        return name in (GITIGNORE, SCREEIGNORE, GIT_DIR) or rel == INFO_EXCLUDE

    def invalidate(self) -> None:
        """Forget every cached rule and folder decision (after an ignore file changed)."""
        self._dir_reasons = {}
        self._chains = {}
        self._info_exclude = None

"""One ignore file's text as rules that decide a single path (R-I1); pathspec translates each pattern.

pathspec's GitIgnoreSpecPattern turns one gitignore line into a regex and says whether it negates. That regex is
searched against a path and also matches below what the pattern names: "docs" matches "docs/a.md" through the
folder, marking such a match with its one capturing group (GitIgnoreSpec's directory mark). git instead asks
each folder on its own and never looks below an excluded one, so a Rule here accepts only a match of the path
itself: for a regex with the mark, one that runs to the end of the path. A pattern ending in "**" has no mark
and matches what lies below ("foo/**" matches "foo/a" and "foo/a/b" but not "foo"), as in git.

The trailing '/' of a directory-only pattern is read here and taken off before pathspec sees the line: pathspec
folds it into the regex and reads "a/**/" as "a/", where git ignores the folders below `a` but not `a` itself.
Where pathspec's globs differ from git's (POSIX classes, a '/' inside brackets, reversed ranges, "a**/x", "***",
a negated bracket matching '/', trailing tabs), tests/test_ignore.py records what scree does.
"""

from __future__ import annotations

import os
import re
import stat
import warnings
from dataclasses import dataclass

from pathspec.patterns.gitignore import GitIgnorePatternError
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

IGNORE_FILE_MAX_BYTES = 8 * 1024 * 1024  # an ignore file larger than this is read only up to here
UTF8_BOM = b"\xef\xbb\xbf"
ESCAPED_TRAILING_SPACE = "\\ "
# How pathspec (1.x) ends the regex of a pattern whose last segment is a name: a folder mark (GitIgnoreSpec's
# directory mark, a match of something below the path) or the end (a match of the path itself).
FOLDER_MARK_OR_END = "(?:(?P<ps_d>/)|$)"
END_OF_PATH = "\\Z"


@dataclass(frozen=True, slots=True)
class Rule:
    """One pattern: pathspec's regex, made to match only the path itself, searched in the path below the base."""

    regex: re.Pattern[str]
    negated: bool
    dir_only: bool

    def matches(self, rel: str, is_dir: bool) -> bool:
        """Does the pattern match the path itself (not merely one of its folders)?"""
        if self.dir_only and not is_dir:
            return False
        return self.regex.search(rel) is not None


@dataclass(frozen=True, slots=True)
class RuleFile:
    """The patterns of one ignore file, relative to the folder `base` ("" = root), and how to name it."""

    reason: str
    base: str
    rules: tuple[Rule, ...]
    any_rule: re.Pattern[str] | None  # a match of any rule implies a match of this: a quick pre-check

    @classmethod
    def build(cls, reason: str, base: str, rules: tuple[Rule, ...]) -> RuleFile:
        """The file's rules with their pre-check: every regex in one, or none when two keep pathspec's named mark."""
        return cls(reason, base, rules, _regex("|".join(f"(?:{rule.regex.pattern})" for rule in rules)))

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """True = ignored, False = re-included by a negation, None = no pattern here matches."""
        sub = rel[len(self.base) + 1 :] if self.base else rel
        if self.any_rule is not None and self.any_rule.search(sub) is None:
            return None
        for rule in reversed(self.rules):
            if rule.matches(sub, is_dir):
                return not rule.negated
        return None


def _path_itself(source: str) -> str:
    """pathspec's regex, which matches what lies below the path too, made to match only the path itself.

    Its "a folder mark or the end" becomes "the end"; any other mark may only match at the end of the path, where
    no '/' is, that is, not at all.
    """
    if source.endswith(FOLDER_MARK_OR_END):
        return source.removesuffix(FOLDER_MARK_OR_END) + END_OF_PATH
    regex = _regex(source)
    return source if regex is None or regex.groups == 0 else f"(?:{source}){END_OF_PATH}"


def _regex(source: str) -> re.Pattern[str] | None:
    """Compile a regex made from pathspec's; None where Python refuses it (a reversed range "[z-a]", a name twice)."""
    try:
        with warnings.catch_warnings():
            # "[[:alpha:]]" reaches Python as a set starting with '[', which it warns may one day nest.
            warnings.simplefilter("ignore", FutureWarning)
            return re.compile(source, re.DOTALL)  # DOTALL: a '\n' in a folder name is still part of a name
    except re.error:
        return None


def compile_rule(line: str) -> Rule | None:
    """One line of an ignore file as a Rule, or None for blanks, comments and patterns that match nothing."""
    line = line.removesuffix("\r")
    # pathspec strips trailing whitespace just so (unless a space is escaped); done first to find the '/'.
    if not line.endswith(ESCAPED_TRAILING_SPACE):
        line = line.rstrip()
    dir_only = line.endswith("/")
    try:
        source, include = GitIgnoreSpecPattern.pattern_to_regex(line.removesuffix("/"))
    except GitIgnorePatternError:  # "!" alone, a trailing backslash
        return None
    if source is None or include is None:
        return None
    regex = _regex(_path_itself(source))
    return None if regex is None else Rule(regex=regex, negated=not include, dir_only=dir_only)


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

"""Pure: a search's `path` scope (a folder prefix or a glob, R-M10), matched against indexed paths in linear time.

`docs/en/` is a folder: the files below it. `docs/en` is that folder or a file of that name. With `*`, `?` or `[...]`
it is a glob over the relative path, as in .gitignore: `*` and `?` stay within one name, `**` crosses folders, and
a folder it matches brings everything below it (`**/api/*.md`, `docs/*`, `**/api/`). The store applies the scope in
SQL (scree_in_scope), so a scoped search still finds k hits inside the scope.

Why no regex: a glob turned into a backtracking regex (`[^/]*[^/]*...Z`, `(?:[^/]*/)*`) takes exponential time on a
path that almost matches, so one `path` argument of `'*' * 48 + 'Z'` hung a reader (issue 25). Here a glob is a list
of per-name patterns and `**` gaps; each part is placed at its leftmost possible spot and never revisited, which is
exact for wildcards that match any run (the classic greedy wildcard argument) and bounded by path × glob length.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, partial

from scree.errors import UsageError

GLOB_CHARS = frozenset("*?[")
MAX_SCOPE_CHARS = 4096  # PATH_MAX on Linux
_LITERAL, _GLOB = "L", "G"  # the first letter of a scope token: a plain folder/file, or a glob


@dataclass(frozen=True)
class _Class:
    """`[...]`: one character of a name that is (or, negated, is not) in one of the ranges; never `/`."""

    negated: bool
    ranges: tuple[tuple[str, str], ...]

    def regex(self) -> str:
        body = "".join(re.escape(lo) if lo == hi else f"{re.escape(lo)}-{re.escape(hi)}" for lo, hi in self.ranges)
        return f"[^/{body}]" if self.negated else f"(?![/])[{body}]"


_STAR, _ANY_FOLDERS = "*", "**"  # within one name; zero or more whole names (a `**` part of a glob)
_Token = str | _Class  # a literal character, "?", _STAR, _ANY_FOLDERS (before splitting) or a class


def scope_pattern(scope: str) -> str:
    """The scope as a token for `in_scope` (and SQL's scree_in_scope); UsageError for one that can match nothing
    (empty, absolute, `..`) or is malformed (`[z-a]`), so a typo is an error rather than an empty answer."""
    text = scope.strip()
    while text.startswith("./"):
        text = text[2:]
    if not text or text in (".", "./"):
        raise UsageError("path scope is empty: give a folder (docs/) or a glob (**/api/*.md)")
    if len(text) > MAX_SCOPE_CHARS or "\x00" in text:
        raise UsageError("path scope is not a usable path")
    if text.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", text):
        raise UsageError(f"path scope {scope!r} is absolute: give it relative to the project root (e.g. docs/)")
    parts = text.rstrip("/").split("/")
    if ".." in parts:
        raise UsageError(f"path scope {scope!r} leaves the project folder")
    trimmed = re.sub("/+", "/", text.rstrip("/"))
    folder = "/" if text.endswith("/") else ""
    if not GLOB_CHARS.intersection(text):
        return f"{_LITERAL}{trimmed}{folder}"
    _parsed(trimmed)  # refuses a malformed class now, in the caller's words, not later inside SQL
    return f"{_GLOB}{trimmed}{folder}"


def in_scope(pattern: str, path: str) -> bool:
    """Is the indexed `path` inside the scope whose token (from scope_pattern) is `pattern`? (SQL: scree_in_scope.)"""
    kind, body = pattern[:1], pattern[1:]
    folder = body.endswith("/")
    if kind == _LITERAL:
        return path.startswith(body) if folder else path == body or path.startswith(body + "/")
    if kind != _GLOB:
        return False
    names = path.split("/")
    return _match_prefix(_parsed(body.rstrip("/")), names, len(names) - 1 if folder else len(names))


_Glob = tuple[tuple["_Name", ...], ...]  # blocks of per-name patterns; between two blocks, a `**` gap


@dataclass(frozen=True)
class _Name:
    """One name's pattern: fixed-width, star-free pieces with a `*` between each two."""

    pieces: tuple[re.Pattern[str], ...]
    widths: tuple[int, ...]
    starred: bool  # at least one `*`: pieces[0] is a prefix and pieces[-1] a suffix; otherwise one piece, the whole

    def matches(self, name: str) -> bool:
        """Linear in len(name) × the pattern's length: each piece is fixed-width (no quantifier) and placed leftmost."""
        if not self.starred:
            return len(name) == self.widths[0] and self.pieces[0].fullmatch(name) is not None
        first, last = self.widths[0], self.widths[-1]
        if (
            first + last > len(name)
            or not self.pieces[0].match(name)
            or not self.pieces[-1].fullmatch(name, len(name) - last)
        ):
            return False
        at, end = first, len(name) - last
        for piece, width in zip(self.pieces[1:-1], self.widths[1:-1], strict=True):
            found = piece.search(name, at, end)
            if found is None:
                return False
            at = found.start() + width
        return True


@lru_cache(maxsize=64)
def _parsed(glob: str) -> _Glob:
    """The glob's blocks of name patterns (a `**` name between blocks). `**` at the start of a name (`**.md`) also
    crosses folders before it, at the end (`docs**/x`) after it; inside a name (`a**b`) it is `*`, as in .gitignore;
    a trailing `**` (`docs/**`) is one name, everything below it being in scope anyway."""
    names: list[list[_Token]] = [[]]
    for token in _tokens(glob):
        if token == "/":
            names.append([])
        else:
            names[-1].append(token)
    parts: list[list[_Token] | None] = []  # None: a `**` gap
    for index, name in enumerate(names):
        if name == [_ANY_FOLDERS]:
            parts.append(None)
            continue
        lead = name[:1] == [_ANY_FOLDERS]
        trail = len(name) > 1 and name[-1] == _ANY_FOLDERS
        if lead:
            parts.append(None)
        parts.append([_STAR if token == _ANY_FOLDERS else token for token in name])
        if trail and index < len(names) - 1:
            parts.append(None)
    if parts[-1] is None:
        parts[-1] = [_STAR]
    blocks: list[list[_Name]] = [[]]
    for part in parts:
        if part is None:
            if blocks[-1] or len(blocks) == 1:
                blocks.append([])
        else:
            blocks[-1].append(_name(part))
    return tuple(tuple(block) for block in blocks)


def _name(tokens: list[_Token]) -> _Name:
    pieces: list[list[_Token]] = [[]]
    for token in tokens:
        if token == _STAR:
            if pieces[-1] or len(pieces) == 1:
                pieces.append([])
        else:
            pieces[-1].append(token)
    regexes = tuple(re.compile("".join(_piece_regex(token) for token in piece), re.DOTALL) for piece in pieces)
    return _Name(pieces=regexes, widths=tuple(len(piece) for piece in pieces), starred=len(pieces) > 1)


def _piece_regex(token: _Token) -> str:
    if isinstance(token, _Class):
        return token.regex()
    return "[^/]" if token == "?" else re.escape(token)


def _tokens(glob: str) -> list[_Token]:
    """The glob's characters as tokens: runs of `*` (two or more: `**`), `?`, classes, `/` and literals."""
    out: list[_Token] = []
    i = 0
    while i < len(glob):
        char = glob[i]
        if char == "*":
            run = len(glob[i:]) - len(glob[i:].lstrip("*"))
            out.append(_ANY_FOLDERS if run > 1 else _STAR)
            i += run
        elif char == "[" and (end := _class_end(glob, i)) > 0:
            out.append(_class(glob[i + 1 : end], glob))
            i = end + 1
        else:
            out.append(char)
            i += 1
    return out


def _class(inner: str, glob: str) -> _Class:
    """`[...]`'s members: single characters and `a-z` ranges; a leading `!`/`^` negates, a leading `]` or an edge
    `-` is a member. A reversed range (`[z-a]`) is refused: it would silently match nothing."""
    negated = inner.startswith(("!", "^"))
    inner = inner[1:] if negated else inner
    ranges: list[tuple[str, str]] = []
    i = 0
    while i < len(inner):
        if i + 2 < len(inner) and inner[i + 1] == "-":
            lo, hi = inner[i], inner[i + 2]
            if lo > hi:
                raise UsageError(f"path scope {glob!r} has an empty character range [{lo}-{hi}]: write [{hi}-{lo}]")
            ranges.append((lo, hi))
            i += 3
        else:
            ranges.append((inner[i], inner[i]))
            i += 1
    return _Class(negated=negated, ranges=tuple(ranges))


def _class_end(glob: str, start: int) -> int:
    """Index of the `]` closing the class opened at `start`, or -1 when it is not closed (then `[` is literal)."""
    i = start + 1
    if i < len(glob) and glob[i] in "!^":
        i += 1
    if i < len(glob) and glob[i] == "]":  # a leading `]` is a member
        i += 1
    end = glob.find("]", i)
    return end if end > start + 1 else -1


def _match_prefix(glob: _Glob, names: list[str], most: int) -> bool:
    """Do the path's first k names match the glob for some 1 <= k <= `most`? The first block sits at the start,
    each later one (after a `**` gap) at its leftmost fit after the previous: leftmost leaves the most room for the
    rest, and the last block's leftmost fit gives the smallest k."""
    at = 0
    for index, block in enumerate(glob):
        if index == 0:
            if not _block_at(block, names, 0):
                return False
            at = len(block)
            continue
        found = next((start for start in range(at, len(names) - len(block) + 1) if _block_at(block, names, start)), -1)
        if found < 0:
            return False
        at = found + len(block)
    return 1 <= at <= most


def _block_at(block: tuple[_Name, ...], names: list[str], start: int) -> bool:
    if start + len(block) > len(names):
        return False
    return all(name.matches(names[start + offset]) for offset, name in enumerate(block))


def scope_filter(scope: str) -> Callable[[str], bool]:
    """The user's scope as the path filter an IndexReader search takes (UsageError as scope_pattern says)."""
    return partial(in_scope, scope_pattern(scope))

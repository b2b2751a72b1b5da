"""Pure: a search's `path` scope (a folder prefix or a glob, R-M10) as one regex over indexed paths.

`docs/en/` is a folder: the files below it. `docs/en` is that folder or a file of that name. With `*`, `?` or `[...]`
it is a glob over the relative path, as in .gitignore: `*` and `?` stay within one name, `**` crosses folders, and
a folder it matches brings everything below it (`**/api/*.md`, `docs/*`, `**/api/`). The store applies the regex in
SQL (scree_in_scope), so a scoped search still finds k hits inside the scope.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache, partial

from scree.errors import UsageError

GLOB_CHARS = frozenset("*?[")
MAX_SCOPE_CHARS = 4096  # PATH_MAX on Linux


def scope_pattern(scope: str) -> str:
    """The regex (anchored at the start of a relative path) for the user's scope; UsageError for one that can match
    nothing (empty, absolute, `..`), so a typo is an error rather than an empty answer."""
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
    body = _glob_body(trimmed) if GLOB_CHARS.intersection(text) else re.escape(trimmed)
    return f"^{body}/" if text.endswith("/") else f"^{body}(?:/|$)"


def _glob_body(glob: str) -> str:
    """A glob as regex: `**/` any folders (none too), `**` anything, `*` within a name, `?` one character of a name,
    `[...]` a class; everything else literal."""
    out: list[str] = []
    i = 0
    while i < len(glob):
        char = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[" and (end := _class_end(glob, i)) > 0:
            inner = glob[i + 1 : end]
            negated = inner.startswith(("!", "^"))
            inner = inner[1:] if negated else inner
            escaped = inner.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
            out.append(f"[^/{escaped}]" if negated else f"[{escaped}]")
            i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


def _class_end(glob: str, start: int) -> int:
    """Index of the `]` closing the class opened at `start`, or -1 when it is not closed (then `[` is literal)."""
    i = start + 1
    if i < len(glob) and glob[i] in "!^":
        i += 1
    if i < len(glob) and glob[i] == "]":  # a leading `]` is a member
        i += 1
    end = glob.find("]", i)
    return end if end > start + 1 else -1


@lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.DOTALL)


def scope_filter(scope: str) -> Callable[[str], bool]:
    """The user's scope as the path filter a Store search takes (UsageError as scope_pattern says)."""
    return partial(in_scope, scope_pattern(scope))


def in_scope(pattern: str, path: str) -> bool:
    """Is the indexed `path` inside the scope whose regex is `pattern`? (SQL: scree_in_scope(pattern, path).)"""
    return _compiled(pattern).search(path) is not None

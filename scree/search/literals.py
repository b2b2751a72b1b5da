"""A query's literal strings (issue 32): what it names verbatim and a chunk that answers it holds verbatim.

A docs question often carries a name the keyword index cuts into words: a flag (`--snapshot-count`, found as
`snapshot` and `count` anywhere), a file or module name (`jest.config.ts`, `model_dump`), a camelCase API name
(`toBeCalledWith`), or an error message in quotes ('mvcc: database space exceeded'). A chunk that holds the string
as written answers it more surely than one holding its words apart, and a chunk whose heading defines it (a reference
page's `### `--flag=<value>``) more surely than one that mentions it; ranking.add_signal adds both. Plain
hyphenated words (`command-line`, `read-only`) are English, not names: not literals. Pure.
"""

from __future__ import annotations

import re

MIN_LITERAL = 5  # characters; shorter names (`--ci`, `a.b`) are found in too much text to say anything

_QUOTED = re.compile(r"`([^`]{3,})`|(?<!\w)'([^']{6,})'(?!\w)|(?<!\w)\"([^\"]{6,})\"(?!\w)")
_CODE = re.compile(
    r"(?<!\S)(--?[A-Za-z][\w-]{2,})"  # a command-line flag: --snapshot-count, -testPathPattern
    r"|(?<![\w.])([A-Za-z_]\w*(?:[._][A-Za-z_]\w*)+)"  # a dotted or underscored name: jest.config.ts, model_dump
    r"|(?<!\w)([a-z]+(?:[A-Z][a-z0-9]+)+)(?![\w.])"  # a camelCase name: toBeCalledWith (not siRNA, not iPSC)
)
_SPACES = re.compile(r"\s+")
# What a reference heading puts beside the name it defines: a type or placeholder in brackets (`globalSetup` [string],
# `--testPathPatterns=<regex>`, `.toHaveBeenCalledWith(arg1, ...)`), a default in quotes, markup (backticks, escapes).
_SIGNATURE = re.compile(r"\[[^\]]*\]|<[^>]*>|\([^)]*\)|\{[^}]*\}|'[^']*'|\"[^\"]*\"")
_MARKUP = re.compile(r"[`\\*]")


def literals(query: str) -> tuple[str, ...]:
    """The query's quoted strings (in backticks, or in quotes of at least 6 characters) and code-like names, lower
    case with runs of white space as one space, each once, in order."""
    found = [next(group for group in match.groups() if group) for match in _QUOTED.finditer(query)]
    rest = _QUOTED.sub(" ", query)
    for match in _CODE.finditer(rest):
        token = next(group for group in match.groups() if group).rstrip(".")
        if len(token) >= MIN_LITERAL:
            found.append(token)
    return tuple(dict.fromkeys(flat(text) for text in found if len(text.strip()) >= MIN_LITERAL))


def flat(text: str) -> str:
    """`text` as literals are compared: lower case, runs of white space as one space."""
    return _SPACES.sub(" ", text).strip().lower()


def defined_name(trail: str, separator: str = " > ") -> str:
    """The name a chunk's heading trail defines, as literals are compared, or "": its last heading, when that is one
    word beside its signature (`### `--shard``, `### `globalSetup` \\[string]`, `### `--testPathPatterns=<regex>``), not
    a sentence that mentions a name (`### `--testPathPattern` was renamed to ...`)."""
    title = _SIGNATURE.sub(" ", _MARKUP.sub("", trail.rsplit(separator, 1)[-1]))
    words = title.split()
    return flat(words[0]).strip("=:.,") if len(words) == 1 else ""


def defined_share(wanted: tuple[str, ...], trail: str) -> float:
    """Share of the `wanted` literals (0..1) that the chunk's heading defines (defined_name holds it)."""
    name = defined_name(trail)
    if not wanted or not name:
        return 0.0
    return sum(literal in name for literal in wanted) / len(wanted)


def literal_share(wanted: tuple[str, ...], text: str) -> float:
    """Share of the `wanted` literals (0..1) that `text` holds as written (case and spacing aside)."""
    if not wanted:
        return 0.0
    held = flat(text)
    return sum(literal in held for literal in wanted) / len(wanted)

"""Text made harmless to show (issue 13, R-M1, R-L0): terminal escapes shown instead of executed, and the characters
that reorder or hide text (bidi overrides, zero-width) kept out of attributes a person or an agent reads.

File names, headings, hit text and API error bodies are data from elsewhere: `\\x1b]0;TITLE\\x07` would retitle the
terminal, `\\x1b[2J` clear it, `\\x9b` start a CSI on terminals that honour C1. Attribute values (a hit's path and
heading) are quoted here too, and whether a file name survives that quoting unchanged, which decides whether the
writer indexes it at all (a hit's path must round-trip to read_doc). Pure functions, no I/O.
"""

from __future__ import annotations

import re

# C0 except tab and line feed, DEL, C1, and lone surrogates (which cannot even be printed)
_TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
# bidi embeddings, overrides and isolates, marks, zero-width characters and the BOM
_INVISIBLE = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: str) -> str:
    """`text` for a terminal or a log: control characters (tab and newline aside), C1, bidi and zero-width
    characters shown as `\\xNN` / `\\uNNNN` instead of acting."""
    return _INVISIBLE.sub(_escape, _TERMINAL_UNSAFE.sub(_escape, text))


def json_inert(dumped: str) -> str:
    """The output of json.dumps(..., ensure_ascii=False) with the C1, bidi and zero-width characters (which it
    writes raw) as `\\uNNNN` escapes: the same JSON value, nothing raw reaches the terminal (R-L0)."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", dumped)


def drop_invisible(text: str) -> str:
    """`text` without bidi controls and zero-width characters: for the path and heading attributes (R-M1)."""
    return _INVISIBLE.sub("", text)


_TAG_OPEN = re.compile(r"<(?=/?(?:hit|doc))", re.IGNORECASE)  # R-M1: any `<hit`, not only whole tags
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def neutralise(text: str) -> str:
    """Replace the `<` of any `<hit`, `</hit`, `<doc`, `</doc` (any case): content cannot forge or close an element."""
    return _TAG_OPEN.sub("&lt;", text)


def attribute(value: str) -> str:
    """A quoted attribute value: control characters stripped, `"` escaped so it cannot end the quote, and tags
    neutralised, since a heading is file text too (R-M1)."""
    return '"' + neutralise(strip_controls(value).replace('"', "&quot;")) + '"'


def strip_controls(value: str) -> str:
    """An attribute's text: control characters, bidi overrides and zero-width characters removed (R-M1)."""
    return drop_invisible(_CONTROL.sub("", value))


UNSHOWABLE_NAME = (
    "file name has a character a hit cannot show as it is (a quote, a control or invisible character, or a "
    "<hit/<doc tag), so read_doc could not be given it back"
)


def shown_exactly(path: str) -> bool:
    """Does the path attribute show `path` as it is? Only such names are indexed (issue 13: a round trip from a
    hit's path to read_doc must be exact)."""
    return attribute(path) == f'"{path}"'

"""Text made harmless to show (issue 13, R-M1, R-L0): terminal escapes shown instead of executed, and the characters
that reorder or hide text (bidi overrides, zero-width) kept out of attributes a person or an agent reads.

File names, headings, hit text and API error bodies are data from elsewhere: `\\x1b]0;TITLE\\x07` would retitle the
terminal, `\\x1b[2J` clear it, `\\x9b` start a CSI on terminals that honour C1. Pure functions, no I/O.
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

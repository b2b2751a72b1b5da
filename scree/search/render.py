"""Hits and docs to the exact text format of SPEC §8 (R-M1, R-M5, R-M6), with caps and neutralising.

Every reply fits the client (R-M10): Claude Code saves a tool result over MAX_MCP_OUTPUT_TOKENS (25,000 by default)
to a file instead of showing it to the model, so each reply is capped by a token estimate as well as by bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scree.config import DEFAULT_CLIENT_TOKENS
from scree.inert import attribute, neutralise
from scree.search.hits import Hit

HIT_TEXT_CAP_BYTES = 4000  # R-M1
RESPONSE_CAP_BYTES = 64 * 1024  # R-M1
DOC_CAP_BYTES = 256 * 1024  # R-M6
NO_RESULTS = "No matching documents."
CUT_MARK = "[cut]"
ALSO_SHOWN = 5  # R-M1: also= names this many twins, then "and N more" (3,000 twins once filled the whole reply)

TOKEN_MARGIN = 0.8  # a reply may use this share of the client's limit: the estimate is not the client's tokenizer
# The token estimate, in sixths of a token: an ASCII byte counts 1/3 of a token (English prose runs about 4 bytes a
# token, markdown and code 3-4; Claude Code's own first guess is characters / 4), any other UTF-8 byte 1/2 (a CJK
# character, 3 bytes, is 1.5 tokens; an emoji, 4 bytes, 2). Whole numbers keep the estimate exactly additive.
UNITS_PER_TOKEN = 6
ASCII_BYTE_UNITS = 2
OTHER_BYTE_UNITS = 3
_ASCII = bytes(range(128))


@dataclass(frozen=True, slots=True)
class Size:
    """A piece of a reply measured both ways: UTF-8 bytes and estimated tokens (in 1/UNITS_PER_TOKEN)."""

    bytes: int = 0
    units: int = 0

    @classmethod
    def of(cls, text: str) -> Size:
        raw = text.encode("utf-8", "surrogatepass")  # a lone surrogate from a file name still has a size
        other = len(raw.translate(None, _ASCII))
        return cls(len(raw), (len(raw) - other) * ASCII_BYTE_UNITS + other * OTHER_BYTE_UNITS)

    def __add__(self, other: Size) -> Size:
        return Size(self.bytes + other.bytes, self.units + other.units)

    def __sub__(self, other: Size) -> Size:
        return Size(self.bytes - other.bytes, self.units - other.units)

    @property
    def tokens(self) -> int:
        return -(-self.units // UNITS_PER_TOKEN)


NEWLINE = Size.of("\n")


def estimate_tokens(text: str) -> int:
    """The token estimate replies are capped by (R-M10): higher than a real tokenizer's count for nearly any text."""
    return Size.of(text).tokens


@dataclass(frozen=True, slots=True)
class ReplyCap:
    """How large one whole reply may be: UTF-8 bytes, and estimated tokens (R-M1, R-M6, R-M10)."""

    bytes: int
    tokens: int

    @classmethod
    def for_client(cls, cap_bytes: int, client_tokens: int = DEFAULT_CLIENT_TOKENS) -> ReplyCap:
        """A cap of `cap_bytes` and TOKEN_MARGIN of the client's token limit, whichever is reached first."""
        return cls(cap_bytes, max(1, int(client_tokens * TOKEN_MARGIN)))

    @property
    def size(self) -> Size:
        return Size(self.bytes, self.tokens * UNITS_PER_TOKEN)

    @property
    def max_chars(self) -> int:
        """The most characters a reply within the cap can hold (each is at least a byte and 1/3 of a token), as
        `anthropic/maxResultSizeChars` declares it: Claude Code saves a longer result to a file."""
        return min(self.bytes, self.tokens * UNITS_PER_TOKEN // ASCII_BYTE_UNITS)


def within(size: Size, cap: Size) -> bool:
    return size.bytes <= cap.bytes and size.units <= cap.units


SEARCH_CAP = ReplyCap.for_client(RESPONSE_CAP_BYTES)
DOC_CAP = ReplyCap.for_client(DOC_CAP_BYTES)


def fit_text(text: str, cap: Size) -> str:
    """The longest prefix of `text` within `cap` (cut on a character boundary); `text` itself when it fits."""
    if within(Size.of(text), cap):
        return text
    low, high = 0, min(len(text), max(cap.bytes, 0))
    while low < high:  # the prefix size grows with its length: find the longest that fits
        mid = (low + high + 1) // 2
        if within(Size.of(text[:mid]), cap):
            low = mid
        else:
            high = mid - 1
    return text[:low]


def cut_utf8(text: str, limit: int) -> tuple[str, bool]:
    """`text` cut to at most `limit` UTF-8 bytes on a character boundary; and whether it was cut."""
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return text, False
    return raw[:limit].decode("utf-8", "ignore"), True


def lines_attr(start: int | None, end: int | None) -> str:
    return f"{start}-{end}" if start is not None and end is not None else ""


def also_text(also: Sequence[str]) -> str:
    """R-M1: the first ALSO_SHOWN twins, then how many more."""
    shown = ", ".join(also[:ALSO_SHOWN])
    return shown if len(also) <= ALSO_SHOWN else f"{shown}, and {len(also) - ALSO_SHOWN} more"


def render_hit(n: int, hit: Hit) -> str:
    attrs = [f'n="{n}"', f"path={attribute(hit.path)}"]
    if hit.stale:
        attrs.append('stale="true"')
    else:
        attrs.append(f"lines={attribute(lines_attr(hit.start, hit.end))}")
        if hit.part is not None:  # issue 34: which part of one long line; read_doc(start=line, part=n) shows it
            attrs.append(f'part="{hit.part[0]}/{hit.part[1]}"')
    attrs.append(f"heading={attribute(hit.heading)}")
    attrs.append(f'score="{hit.score:.3f}"')
    if hit.version is not None:
        attrs.append(f"version={attribute(hit.version)}")
    if hit.also:
        attrs.append(f"also={attribute(also_text(hit.also))}")
    body, was_cut = cut_utf8(neutralise(hit.text), HIT_TEXT_CAP_BYTES)
    if was_cut:
        body = body.rstrip("\n") + "\n" + CUT_MARK
    return f"<hit {' '.join(attrs)}>\n{body.rstrip(chr(10))}\n</hit>"


def render_hits(hits: Sequence[Hit], notes: Sequence[str] = (), cap: ReplyCap = SEARCH_CAP) -> str:
    """The search_docs reply: hits best first within `cap`, then the omitted count and any status note.

    The first hit is always shown; each next one only if the whole reply, its last lines included, stays in `cap`.
    """
    tail = "\n".join(notes)
    if not hits:
        return NO_RESULTS + ("\n" + tail if tail else "")
    # room for the longest omitted line and the notes, each after a newline
    used = Size.of(omitted_line(len(hits))) + NEWLINE + (Size.of(tail) + NEWLINE if tail else Size())
    parts: list[str] = []
    for n, hit in enumerate(hits, start=1):
        block = render_hit(n, hit)
        size = Size.of(block) + (NEWLINE if parts else Size())
        if parts and not within(used + size, cap.size):
            parts.append(omitted_line(len(hits) - n + 1))
            break
        parts.append(block)
        used += size
    if tail:
        parts.append(tail)
    return "\n".join(parts)


def omitted_line(count: int) -> str:
    return f"[{count} more hits omitted: output limit]"


def truncated_line(next_line: int) -> str:
    """R-M6: the last line of a read_doc reply that stopped early; `lines=` names the whole lines shown."""
    return f"[truncated to fit the reply limit: read on from line {next_line}]"


def render_doc(
    path: str,
    lines: Sequence[str],
    start: int,
    end: int,
    cap: ReplyCap = DOC_CAP,
    note: str | None = None,
    part: tuple[int, int] | None = None,
) -> str:
    """The read_doc reply for lines start..end (1-based, inclusive) already selected into `lines`.

    When the whole reply would not fit in `cap`, the text stops after the last whole line that fits, `lines=` names
    the lines shown and a last line says where to read on, so an agent misses nothing (R-M6); only a single line
    over the cap is shown in part. A `note` (where the text came from) is the last line, after the element. `part`
    (n, of): `lines` holds part n of line `start`, a line too long for one chunk (issue 34), named part="n/of".
    """
    head = f"<doc path={attribute(path)} " + (f'part="{part[0]}/{part[1]}" ' if part is not None else "") + "lines="
    close = "\n</doc>"
    # the frame at its largest: a range and a read-on line number are never longer than the requested range's
    frame = Size.of(f'{head}"{start}-{end}">\n') + Size.of(close) + NEWLINE + Size.of(truncated_line(end + 1))
    if note is not None:
        frame += NEWLINE + Size.of(note)
    body, shown, was_cut = _doc_body(lines, cap.size - frame)
    if was_cut:
        end = start + shown - 1
        body += "\n" + truncated_line(end + 1)
    tail = f"\n{note}" if note is not None else ""
    return f"{head}{attribute(lines_attr(start, end) if shown else '')}>\n{body}{close}{tail}"


def _doc_body(lines: Sequence[str], room: Size) -> tuple[str, int, bool]:
    """The neutralised text of the whole lines that fit in `room`; how many lines; and whether any were left."""
    kept: list[str] = []
    used = Size()
    for line in lines:
        safe = neutralise(line)
        size = Size.of(safe) + (NEWLINE if kept else Size())  # the newline that joins it to the previous line
        if not within(used + size, room):
            if not kept:  # one line alone is over the cap: show what fits of it
                return fit_text(safe, room), 1, True
            return "\n".join(kept), len(kept), True
        kept.append(safe)
        used += size
    return "\n".join(kept), len(kept), False

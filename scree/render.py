"""Hits and docs to the exact text format of SPEC §8 (R-M1, R-M5, R-M6), with caps and neutralising."""

from __future__ import annotations

import re
from collections.abc import Sequence

from scree.inert import drop_invisible
from scree.results import Hit

HIT_TEXT_CAP_BYTES = 4000  # R-M1
RESPONSE_CAP_BYTES = 64 * 1024  # R-M1
DOC_CAP_BYTES = 256 * 1024  # R-M6
NO_RESULTS = "No matching documents."
CUT_MARK = "[cut]"
DOC_TRUNCATED_MARK = "[truncated at 256 KB]"
ALSO_SHOWN = 5  # R-M1: also= names this many twins, then "and N more" (3,000 twins once filled the whole reply)

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
    attrs.append(f"heading={attribute(hit.heading)}")
    attrs.append(f'score="{hit.score:.3f}"')
    if hit.also:
        attrs.append(f"also={attribute(also_text(hit.also))}")
    body, was_cut = cut_utf8(neutralise(hit.text), HIT_TEXT_CAP_BYTES)
    if was_cut:
        body = body.rstrip("\n") + "\n" + CUT_MARK
    return f"<hit {' '.join(attrs)}>\n{body.rstrip(chr(10))}\n</hit>"


def render_hits(hits: Sequence[Hit], notes: Sequence[str] = ()) -> str:
    """The search_docs reply: hits best first within 64 KB, then the omitted count and any status note."""
    tail = "\n".join(notes)
    if not hits:
        return NO_RESULTS + ("\n" + tail if tail else "")
    budget = RESPONSE_CAP_BYTES - len(tail.encode("utf-8")) - 64
    parts: list[str] = []
    used = 0
    for n, hit in enumerate(hits, start=1):
        block = render_hit(n, hit)
        size = len(block.encode("utf-8")) + 1
        if used + size > budget and n > 1:  # R-M1: a reply always holds its first hit
            parts.append(f"[{len(hits) - n + 1} more hits omitted: output limit]")
            break
        parts.append(block)
        used += size
    if tail:
        parts.append(tail)
    return "\n".join(parts)


def render_doc(path: str, lines: Sequence[str], start: int, end: int) -> str:
    """The read_doc reply for lines start..end (1-based, inclusive) already selected into `lines`.

    Over 256 KB the text stops after the last whole line that fits and `lines=` names the lines shown, so an agent
    can go on from the next one (R-M6); only a single line over the cap is shown in part.
    """
    body, shown, was_cut = _doc_body(lines)
    if was_cut:
        body += "\n" + DOC_TRUNCATED_MARK
        end = start + shown - 1
    return f"<doc path={attribute(path)} lines={attribute(lines_attr(start, end) if shown else '')}>\n{body}\n</doc>"


def _doc_body(lines: Sequence[str]) -> tuple[str, int, bool]:
    """The neutralised text of the whole lines that fit in DOC_CAP_BYTES; how many lines; and whether any were left."""
    kept: list[str] = []
    used = 0
    for line in lines:
        safe = neutralise(line)
        size = len(safe.encode("utf-8")) + (1 if kept else 0)  # the newline that joins it to the previous line
        if used + size > DOC_CAP_BYTES:
            if not kept:  # one line alone is over the cap: show what fits of it
                return cut_utf8(safe, DOC_CAP_BYTES)[0], 1, True
            return "\n".join(kept), len(kept), True
        kept.append(safe)
        used += size
    return "\n".join(kept), len(kept), False

"""A document's numbered lines read one at a time with a look at the next ones, and the start of a section: what
the line-scanning chunkers (rst, AsciiDoc) share, since their titles can span two lines."""

from __future__ import annotations

from collections import deque

from scree.content.chunking import HEADING_SEPARATOR, ChunkBuilder, clean_text, lines_of, push_heading


class Lookahead:
    """The lines of a text numbered from 1, read on demand (a 50 MB file is never split into a list at once)."""

    def __init__(self, text: str) -> None:
        self._source = enumerate(lines_of(clean_text(text)), start=1)
        self._ahead: deque[tuple[int, str]] = deque()

    def peek(self, n: int) -> str | None:
        """The n-th line still to come (1: the next), None past the end."""
        while len(self._ahead) < n:
            nxt = next(self._source, None)
            if nxt is None:
                return None
            self._ahead.append(nxt)
        return self._ahead[n - 1][1]

    def pop(self) -> tuple[int, str] | None:
        """The next line and its number, None at the end."""
        return self._ahead.popleft() if self.peek(1) is not None else None

    def take(self, n: int) -> list[tuple[int, str]]:
        """The next n lines (fewer at the end): the rest of a title the scanner has looked at."""
        return [popped for _ in range(n) if (popped := self.pop()) is not None]


def open_section(
    builder: ChunkBuilder, trail: list[tuple[int, str]], level: int, words: str, title_lines: list[tuple[int, str]]
) -> None:
    """Close the chunk before a title, push the title on the heading trail at its level, and add its lines."""
    builder.close()
    push_heading(trail, level, words)
    builder.heading = HEADING_SEPARATOR.join(text for _, text in trail if text)
    for line_no, line in title_lines:
        builder.add(line, line_no, in_fence=False, is_heading=True)

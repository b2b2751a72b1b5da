"""The words embedded of a chunk, as a format's readable-line rules add them (issue 33; pure): runs of blank lines
cut to one, and each code block written as markdown's fence is, a "```lang" line, its first CODE_LINES_EMBEDDED
lines and a closing "```", so the model reads every format's code alike."""

from __future__ import annotations

from scree.content.chunking import CODE_LINES_EMBEDDED, THIN_BYTES, bytes_besides_spaces

FENCE = "```"


class EmbeddedLines:
    """Collects the lines embedded of one chunk."""

    __slots__ = ("_out", "_code_lines")

    def __init__(self) -> None:
        self._out: list[str] = []
        self._code_lines = -1  # -1: outside code; else the lines of the open code block embedded so far

    @property
    def in_code(self) -> bool:
        return self._code_lines >= 0

    def blank(self) -> None:
        if self._out and self._out[-1] and self._code_lines != 0:  # none right after a fence opens
            self._out.append("")

    def open_code(self, language: str = "") -> None:
        self.close_code()
        self._out.append(FENCE + language)
        self._code_lines = 0

    def code(self, line: str) -> None:
        """A line of code: the block opens first if it is not open (a literal block, a chunk cut mid-block)."""
        if self._code_lines < 0:
            self.open_code()
        if self._code_lines < CODE_LINES_EMBEDDED:
            self._out.append(line)
            self._code_lines += 1

    def close_code(self) -> None:
        if self._code_lines >= 0:
            while self._out and not self._out[-1]:
                self._out.pop()
            self._out.append(FENCE)
            self._code_lines = -1

    def words(self, line: str) -> None:
        """A line of text outside code (closing any open block); nothing for an empty one."""
        self.close_code()
        if line:
            self._out.append(line)

    def text(self) -> str:
        self.close_code()
        while self._out and not self._out[-1]:
            self._out.pop()
        return "\n".join(self._out)


def thin_words(words: str, titled: bool) -> bool:
    """chunking.thin's rule over a chunk's embedded words (issue 25): holding no code, fewer than THIN_BYTES bytes
    of words besides spaces, its title line (`titled`: the chunk opens its section) left out."""
    lines = words.split("\n")
    if any(line.startswith(FENCE) for line in lines):  # a code example is content, however short
        return False
    body = "".join(lines[1:] if titled else lines)
    return bytes_besides_spaces(body) < THIN_BYTES

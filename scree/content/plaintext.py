"""Plain text into chunks, and which .txt files are no docs at all (issue 33; pure: no I/O).

A plain text file has no headings: its chunks close at a blank line once they reach the soft limit, as a markdown
section's do (R-C2). A `.txt` file is not docs when its name says it is a dependency list, a license or a build
file (NOT_DOCS_NAMES, decided before it is read), or when its content is a license text or data: fewer than one line
in PROSE_SHARE reads as words (a CSV, a list of versions, numbers).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from scree.content.chunking import Chunk, ChunkBuilder, clean_text, lines_of
from scree.content.embedded_lines import thin_words

# Names (lowercase, fnmatch) of .txt files that are never docs: dependency lists, licenses, build and robot files.
NOT_DOCS_NAMES = (
    "requirements*.txt", "*requirements.txt", "constraints*.txt", "license*", "licence*", "copying*", "notice*",
    "third_party*", "thirdparty*", "cmakelists.txt", "robots.txt", "*.lock.txt", "pip-*.txt", "dependencies*.txt",
)  # fmt: skip
# The first lines of the common license texts, for a license kept under another name.
_LICENSE_TEXT = re.compile(
    r"permission is hereby granted, free of charge|gnu (?:lesser |affero )?general public license|"
    r"licensed under the apache license|redistribution and use in source and binary forms|"
    r"mozilla public license|this is free and unencumbered software released into the public domain",
    re.IGNORECASE,
)
LICENSE_HEAD_BYTES = 2000
SNIFF_LINES = 400  # the lines of the head that decide whether a .txt file is prose
PROSE_SHARE = 4  # at least one non-blank line in this many reads as words ...
_WORD = re.compile(r"[^\W\d_]{2,}")
PROSE_WORDS = 4  # ... that is, holds this many words of letters, and letters and spaces are most of it
NOT_DOCS_RULE = (
    f"a .txt file is not docs when its name is a dependency list, license or build file ({', '.join(NOT_DOCS_NAMES)}),"
    f" or its text is a license or data (fewer than 1 line in {PROSE_SHARE} of {PROSE_WORDS}+ words)"
)
LICENSE_REASON = "not docs: a license text"
DATA_REASON = f"not docs: data, not prose (fewer than 1 line in {PROSE_SHARE} of {PROSE_WORDS}+ words)"


def iter_chunks(text: str) -> Iterator[Chunk]:
    """A plain text file's chunks: paragraphs gathered up to the soft limit, cut at blank lines (R-C2, R-C3)."""
    builder = ChunkBuilder()
    for line_no, line in enumerate(lines_of(clean_text(text)), start=1):
        if builder.chunks:
            yield from builder.chunks
            builder.chunks.clear()
        builder.add(line, line_no, in_fence=False)
    builder.close()
    yield from builder.chunks


def readable(text: str, state: tuple[str, int] | None = None) -> str:
    """What is embedded of a plain text chunk: its lines, without rule lines (`-----`, `=====`) and runs of blank
    lines cut to one."""
    out: list[str] = []
    for line in text.split("\n"):
        words = line.strip(" \t")
        if not words:
            if out and out[-1]:
                out.append("")
            continue
        if _WORD.search(words) is None and len(set(words)) <= 2:  # a rule of one or two characters
            continue
        out.append(line.rstrip(" \t"))
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)


def thin(text: str) -> bool:
    """Little to read (embedded_lines.thin_words): plain text has no titles."""
    return thin_words(readable(text), titled=False)


def refuses(name: str, text: str) -> str | None:
    """Why a .txt file is no docs page: a license text, or data rather than prose; None for prose."""
    if _LICENSE_TEXT.search(text[:LICENSE_HEAD_BYTES]):
        return LICENSE_REASON
    lines = [line for line in text[: SNIFF_LINES * 200].split("\n", SNIFF_LINES)[:SNIFF_LINES] if line.strip()]
    if not lines:
        return None  # an empty file is indexed as nothing, as an empty markdown file is
    prose = sum(1 for line in lines if _is_prose(line))
    return None if prose * PROSE_SHARE >= len(lines) else DATA_REASON


def _is_prose(line: str) -> bool:
    words = _WORD.findall(line)
    if len(words) < PROSE_WORDS:
        return False
    letters = sum(len(word) for word in words) + line.count(" ")
    return letters * 10 >= len(line.strip()) * 7

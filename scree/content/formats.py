"""The table of docs formats (R-I1, issue 33): one row per format, and the one place that picks a file's chunker.

A row says which file endings claim the format, how to recognise it by content where an ending is shared (a `.txt`
file is reStructuredText or plain text), its chunker (text in, Chunks out, scree.content.chunking's contract) and
its readable-line rules (what of a chunk's text is embedded). The sync, the search's re-check and `read_doc` all ask
`detect`; adding a format is one chunker module and one row here. Pure: no I/O.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from scree.content import asciidoc, plaintext, rst
from scree.content.chunking import (
    Chunk,
    Readable,
    embed_text,
    iter_chunks,
    keyword_mdx,
    readable_markdown,
    readable_mdx,
    thin,
    thin_mdx,
    too_little_to_show,
)
from scree.content.cjk import apart_from_cjk

Chunker = Callable[[str], Iterator[Chunk]]  # LF-normalised or raw text -> its chunks in order, as each closes


@dataclass(frozen=True, slots=True)
class DocFormat:
    """One row of the table."""

    name: str  # as reindex and doctor count it: "markdown", "rst"
    suffixes: tuple[str, ...]  # lowercase file endings that claim it
    chunks: Chunker
    readable: Readable  # (chunk text, block open where it starts) -> the words embedded (R-C4)
    thin: Callable[[str], bool]  # chunk text -> little to read (issue 25: search ranks it lower, chunking.thin)
    # (file name, text) -> True when the content is this format; None: every file its endings claim is. Rows that
    # share an ending are asked in table order, so the one that sniffs comes first.
    claims: Callable[[str, str], bool] | None = None
    # (file name, text) -> why such a file is not docs at all (a license, a data file), or None; asked of the last
    # row that claims an ending when no row before it did
    refuses: Callable[[str, str], str | None] | None = None
    # names (lowercase fnmatch patterns) of files its endings claim that are never docs, refused before any read
    # (the ignore policy asks name_refusal): `requirements.txt`
    not_docs_names: tuple[str, ...] = ()
    # chunk text -> what keyword search weighs of it (issue 34: MDX's JSX tags are no words); None: the text as is
    keywords: Callable[[str], str] | None = None


MARKDOWN = DocFormat("markdown", (".md", ".markdown"), iter_chunks, readable_markdown, thin)
MDX = DocFormat("mdx", (".mdx",), iter_chunks, readable_mdx, thin_mdx, keywords=keyword_mdx)  # markdown with JSX (#25)
# Sphinx and docutils; Django names its rst sources .txt, so a .txt file whose content is rst is read as rst.
RST = DocFormat("rst", (".rst", ".rest", ".txt"), rst.iter_chunks, rst.readable, rst.thin, claims=rst.looks_like_rst)
ASCIIDOC = DocFormat("asciidoc", (".adoc", ".asciidoc", ".asc"), asciidoc.iter_chunks, asciidoc.readable, asciidoc.thin)
TEXT = DocFormat(
    "text",
    (".txt",),
    plaintext.iter_chunks,
    plaintext.readable,
    plaintext.thin,
    refuses=plaintext.refuses,
    not_docs_names=plaintext.NOT_DOCS_NAMES,
)

FORMATS: tuple[DocFormat, ...] = (MARKDOWN, MDX, RST, ASCIIDOC, TEXT)
# Files of an ending SCREE_EXTENSIONS adds that no row claims are read as markdown, as before the table.
FALLBACK = MARKDOWN
DEFAULT_SUFFIXES: tuple[str, ...] = tuple(dict.fromkeys(suffix for row in FORMATS for suffix in row.suffixes))


@dataclass(frozen=True, slots=True)
class NotDocs:
    """A file its ending lets in whose name or content says it is no docs page (a license, a data file)."""

    reason: str


def suffix_of(path: str) -> str:
    """The file ending of `path` as the table spells endings: lowercase, with its dot; "" for none."""
    return os.path.splitext(path.rpartition("/")[2])[1].lower()


def rows_for(path: str) -> tuple[DocFormat, ...]:
    """The rows whose endings claim `path`, in table order; (FALLBACK,) for an ending no row claims."""
    suffix = suffix_of(path)
    found = tuple(row for row in FORMATS if suffix in row.suffixes)
    return found or (FALLBACK,)


def name_refusal(path: str) -> str | None:
    """Why `path` is never docs by its name alone (a row's not_docs_names), or None; no read needed."""
    name = path.rpartition("/")[2].lower()
    for row in rows_for(path):
        for pattern in row.not_docs_names:
            if fnmatch.fnmatchcase(name, pattern):
                return f"not docs: its name matches {pattern}"
    return None


def detect(path: str, text: str) -> DocFormat | NotDocs:
    """The format `path` is read as, given its text: the first row claiming its ending that recognises the content;
    the last such row when none does, unless that row refuses the file (NotDocs). Never an error: a wrong guess
    costs quality only."""
    rows = rows_for(path)
    name = path.rpartition("/")[2]
    for row in rows[:-1]:
        if row.claims is not None and row.claims(name, text):
            return row
    last = rows[-1]
    if last.refuses is not None:
        reason = last.refuses(name, text)
        if reason is not None:
            return NotDocs(reason)
    return last


def is_thin(path: str, text: str) -> bool:
    """Does a stored chunk of `path` have little to read? Asked of the first row its ending names (a .txt chunk is
    judged as rst's: without the file's text, that is the closer guess for what scree indexes as .txt)."""
    return rows_for(path)[0].thin(text)


def too_little(path: str, text: str) -> bool:
    """chunking.too_little_to_show of a stored chunk of `path`, read as its format reads words: an .mdx chunk of
    import lines and component tags alone (Drizzle's block of imports above each page's title) is nothing to show."""
    keywords = rows_for(path)[0].keywords
    return too_little_to_show(keywords(text) if keywords is not None else text)


def keyword_text(path: str, text: str) -> str:
    """What keyword search weighs of a stored chunk of `path`: its text, as the first row its ending names keeps it,
    its CJK runs apart from the words glued to them (cjk.apart_from_cjk). Both backends index this; the SQLite one
    computes it again, by path and text alone, to delete a row."""
    keywords = rows_for(path)[0].keywords
    return apart_from_cjk(keywords(text) if keywords is not None else text)


def embedded_text(path: str, chunk: Chunk, row: DocFormat) -> str:
    """What is embedded of a chunk of `path` read as `row` (R-C4)."""
    return embed_text(path, chunk, row.readable)

"""AsciiDoc into chunks and the words embedded of them (issue 33; pure: no I/O).

Sections come from `=`..`======` titles (`#` too, as Asciidoctor reads markdown headings) and from two-line setext
titles (a title over `=`, `-`, `~`, `^` or `+` of its length within two); the document title `= Title` heads the
trail. One line scanner (_Scanner) says what each line is: code (`----` listing and `....` literal blocks, literal
paragraphs), hidden (attribute entries, `ifdef::`/`endif::` preprocessor lines, `include::`, comments, passthrough
blocks) or text. `include::` is never followed: it is a line like any other. The scanner holds one open block,
never a stack, so any nesting costs one pass.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from scree.content.chunking import (
    HEADING_CAP_BYTES,
    HEADING_SEPARATOR,
    Chunk,
    ChunkBuilder,
    cap_utf8,
    clean_text,
    lines_of,
    push_heading,
)
from scree.content.embedded_lines import EmbeddedLines, thin_words

_SECTION = re.compile(r"(={1,6}|#{1,6})[ \t]+(\S.*)")  # a closing run of the marks is dropped by _section_title
_SETEXT = re.compile(r"([=\-~^+])\1+[ \t]*")
_SETEXT_LEVEL = {"=": 1, "-": 2, "~": 3, "^": 4, "+": 5}
_DELIMITER = re.compile(r"(-{4,}|\.{4,}|/{4,}|\+{4,}|={4,}|\*{4,}|_{4,}|--|[|,:!]={3,})[ \t]*")
_CODE_DELIMITERS = "-."  # listing and literal blocks
_HIDDEN_DELIMITERS = "/+"  # comment and passthrough blocks
_ATTRIBUTE_ENTRY = re.compile(r":!?[\w][\w-]*!?:(?:[ \t].*)?")
_PREPROCESSOR = re.compile(r"(?:ifdef|ifndef|ifeval|endif|include)::[^\[]*\[.*\][ \t]*")
_BLOCK_ATTRIBUTES = re.compile(r"\[(.*)\][ \t]*")
_SOURCE_STYLE = re.compile(r"(?:source|listing)?(?:%[\w%]*)?,[ \t]*([\w+#.-]+)")
_ADMONITIONS = frozenset({"NOTE", "TIP", "IMPORTANT", "WARNING", "CAUTION"})
_BLOCK_TITLE = re.compile(r"\.([^.\s].*)")
_BLOCK_MACRO = re.compile(r"([a-z]\w*)::([^\[\s]*)\[(.*)\][ \t]*")
_MARKS = frozenset({"'''", "<<<", "+", "***", "---", "- - -", "* * *"})

_XREF = re.compile(r"xref:([^\[\s]+)\[([^\]]*)\]")
_CROSS_REF = re.compile(r"<<([^,<>]+)(?:,[ \t]*([^<>]+))?>>")
_LINK = re.compile(r"(?:link:|mailto:)?(?:(?:https?|ftp|irc)://|link:|mailto:)([^\[\s]*)\[([^\]]*)\]")
_INLINE_MACRO = re.compile(r"\b(?:kbd|btn|menu|footnote|footnoteref|pass|image|icon|anchor|indexterm2?|stem)"
                           r":([^\[\s]*)\[([^\]]*)\]")  # fmt: skip
_ANCHOR = re.compile(r"\[\[[^\]]*\]\]|\[#[\w-]+(?:\.[\w-]+)*\]")
_ROLE_SPAN = re.compile(r"\[[.#][\w.#-]*\]#([^#]+)#")

TEXT, CODE, HIDDEN, BLANK = "text", "code", "hidden", "blank"
_OPEN_CODE, _MARK, _ATTRIBUTES = "open-code", "mark", "attributes"
_BLOCK_TAG = "adoc-"  # Chunk.open_fence inside a block: ("adoc-code-" + delimiter char, delimiter length)


@dataclass(slots=True)
class _Scanner:
    """What each line is, one line at a time: one open code or hidden block (its delimiter) at most."""

    block: str | None = None  # CODE or HIDDEN inside a delimited block; CODE inside a literal paragraph
    delimiter: str = ""  # the line that closes the block ("" for a literal paragraph: a blank line closes it)
    language: str = ""  # of the next listing block, from `[source,lang]`
    seen_blank: bool = True

    @classmethod
    def inside(cls, state: tuple[str, int] | None) -> _Scanner:
        if state is None or not state[0].startswith(_BLOCK_TAG):
            return cls()
        kind, _, char = state[0][len(_BLOCK_TAG) :].partition("-")
        return cls(block=kind, delimiter=char * state[1])

    def state(self) -> tuple[str, int] | None:
        if self.block is None or not self.delimiter:
            return None
        return (f"{_BLOCK_TAG}{self.block}-{self.delimiter[0]}", len(self.delimiter))

    def reset(self) -> None:
        self.block = None
        self.delimiter = self.language = ""
        self.seen_blank = False

    def classify(self, line: str) -> str:
        stripped = line.strip(" \t")
        if self.block is not None and self.delimiter:
            if stripped == self.delimiter:
                self.block, self.delimiter = None, ""
                return _MARK
            return self.block
        if not stripped:
            self.seen_blank = True
            if self.block is not None:  # a literal paragraph ends at a blank line
                self.block = None
            return BLANK
        seen_blank, self.seen_blank = self.seen_blank, False
        if self.block is not None:
            return CODE
        if line[0] in " \t":
            if seen_blank:  # a literal paragraph: indented after a blank line
                self.block = CODE
                return CODE
            return TEXT
        return self._at_margin(line, stripped)

    def _at_margin(self, line: str, stripped: str) -> str:
        """A line that starts at the margin, outside any block."""
        delimiter = _DELIMITER.fullmatch(line)
        if delimiter is not None:
            run = delimiter.group(1)
            if run[0] in _CODE_DELIMITERS and run != "--":
                self.block, self.delimiter = CODE, run
                return _OPEN_CODE
            if run[0] in _HIDDEN_DELIMITERS:
                self.block, self.delimiter = HIDDEN, run
                return HIDDEN
            return _MARK
        if stripped.startswith("//"):
            return HIDDEN
        if line[0] == ":" and _ATTRIBUTE_ENTRY.fullmatch(line):
            return HIDDEN
        if "::" in line and _PREPROCESSOR.fullmatch(line):
            return HIDDEN
        if line[0] == "[" and _BLOCK_ATTRIBUTES.fullmatch(line):
            source = _SOURCE_STYLE.match(line[1:])
            self.language = source.group(1) if source is not None else self.language
            return _ATTRIBUTES
        if stripped in _MARKS:
            return _MARK
        return TEXT


def _heading_at(
    line: str, kind: str, previous_blank: bool, peek: Callable[[int], str | None]
) -> tuple[int, str, int] | None:
    """(level, title, lines used) when a section title starts at this line, else None."""
    if kind != TEXT or line[:1] in (" ", "\t"):
        return None
    found = _SECTION.fullmatch(line)
    if found is not None:
        return len(found.group(1)), _section_title(found.group(2), found.group(1)), 1
    if not previous_blank or line[0] in ".[/:*-<|+'" or line.rstrip().endswith("::"):
        return None
    following = peek(1)
    if following is None or _SETEXT.fullmatch(following) is None:
        return None
    if abs(len(following.rstrip()) - len(line.rstrip())) > 2:
        return None
    return _SETEXT_LEVEL[following[0]], line.strip(), 2


def _section_title(rest: str, marks: str) -> str:
    """`Title ==` -> `Title`: the closing marks the symmetric style adds go (without a regex that could backtrack)."""
    rest = rest.rstrip(" \t")
    if rest.endswith(marks) and rest[: -len(marks)].endswith((" ", "\t")):
        rest = rest[: -len(marks)].rstrip(" \t")
    return rest


def iter_chunks(text: str) -> Iterator[Chunk]:
    """An AsciiDoc document's chunks, each as it closes (R-C1..R-C3 as for markdown: exact source line ranges)."""
    builder = ChunkBuilder()
    scanner = _Scanner()
    trail: list[tuple[int, str]] = []
    ahead: deque[tuple[int, str]] = deque()
    source = enumerate(lines_of(clean_text(text)), start=1)
    previous_blank = True

    def peek(n: int) -> str | None:
        while len(ahead) < n:
            nxt = next(source, None)
            if nxt is None:
                return None
            ahead.append(nxt)
        return ahead[n - 1][1]

    while True:
        if builder.chunks:
            yield from builder.chunks
            builder.chunks.clear()
        if not ahead and peek(1) is None:
            break
        line_no, line = ahead.popleft()
        before = scanner.state()
        kind = scanner.classify(line)
        heading = _heading_at(line, kind, previous_blank, peek)
        if heading is not None:
            level, title, used = heading
            scanner.reset()
            builder.close()
            push_heading(trail, level, heading_words(title))
            builder.heading = HEADING_SEPARATOR.join(words for _, words in trail if words)
            builder.add(line, line_no, in_fence=False, is_heading=True)
            for _ in range(used - 1):
                line_no, line = ahead.popleft()
                builder.add(line, line_no, in_fence=False, is_heading=True)
            previous_blank = False
            continue
        in_block = before is not None and kind in (CODE, HIDDEN)
        builder.add(line, line_no, in_fence=kind == CODE or (before is not None), inside=before if in_block else None)
        previous_blank = kind == BLANK
    builder.close()
    yield from builder.chunks


def heading_words(title: str) -> str:
    """A title as the trail shows it: its words (inline_words), capped; a long title is cut before any regex runs."""
    return cap_utf8(inline_words(title[: HEADING_CAP_BYTES * 4]).strip(), HEADING_CAP_BYTES)


def thin(text: str) -> bool:
    """Little to read besides the title (embedded_lines.thin_words)."""
    head = text.split("\n", 2)[:2]
    titled = _heading_at(head[0], TEXT, True, lambda n: head[n] if n < len(head) else None) is not None
    return thin_words(readable(text), titled)


def chunk_asciidoc(text: str) -> list[Chunk]:
    return list(iter_chunks(text))


def inline_words(line: str) -> str:
    """A line's words without inline markup: xref:a.adoc#b[the text] and <<id,the text>> -> the text, links and
    inline macros -> their text, anchors go, [.role]#text# -> text."""
    if "[" in line:
        if "xref:" in line:
            line = _XREF.sub(lambda m: m.group(2) or _target_words(m.group(1)), line)
        if ":" in line:
            line = _LINK.sub(lambda m: m.group(2) or m.group(1), line)
            line = _INLINE_MACRO.sub(lambda m: m.group(2) or m.group(1), line)
        line = _ANCHOR.sub("", line)
        line = _ROLE_SPAN.sub(r"\1", line) if "#" in line else line
    if "<<" in line:
        line = _CROSS_REF.sub(lambda m: m.group(2) or _target_words(m.group(1)), line)
    return line


def _target_words(target: str) -> str:
    """`install.adoc#linux` -> `install linux`: what a reference without text says."""
    name = target.rpartition("$")[2].replace(".adoc", "").replace("#", " ")
    return name.replace("-", " ").replace("_", " ").strip()


def readable(text: str, state: tuple[str, int] | None = None) -> str:
    """What is embedded of an AsciiDoc chunk: its words with references and macros as text; each listing or literal
    block as a fence with its first lines (EmbeddedLines), `[source,lang]` its language; no attribute entries,
    preprocessor or include lines, comments, passthrough blocks, delimiters or anchors."""
    scanner = _Scanner.inside(state)
    out = EmbeddedLines()
    lines = text.split("\n")
    if state is None and len(lines) > 1 and _heading_at(lines[0], TEXT, True, lambda n: lines[n]) is not None:
        out.words(inline_words(lines[0]).strip())  # a two-line title: its underline is no listing delimiter
        lines = lines[2:] if _SECTION.fullmatch(lines[0]) is None else lines[1:]
    for line in lines:
        kind = scanner.classify(line)
        if kind == BLANK:
            if scanner.block is None:  # a literal paragraph ends here
                out.close_code()
            out.blank()
        elif kind == CODE:
            out.code(line.rstrip(" \t"))
        elif kind == _OPEN_CODE:
            out.open_code(scanner.language)
            scanner.language = ""
        elif kind == _MARK:
            out.close_code()
        elif kind == _ATTRIBUTES:
            out.words(_attribute_words(line))
        elif kind == TEXT:
            out.words(_text_words(line))
    return out.text()


def _attribute_words(line: str) -> str:
    """`[NOTE]` -> NOTE (an admonition block); every other attribute list carries no words."""
    inner = line.strip()[1:-1].strip()
    return inner if inner in _ADMONITIONS else ""


def _text_words(line: str) -> str:
    title = _BLOCK_TITLE.fullmatch(line)
    if title is not None:
        line = title.group(1)
    macro = _BLOCK_MACRO.fullmatch(line)
    if macro is not None:  # image::x.png[Alt text,300] -> Alt text; toc::[] -> nothing
        first = macro.group(3).partition(",")[0].strip().strip('"')
        return "" if "=" in first else first
    if line.startswith("|"):
        line = line.replace("|", " ")
    return inline_words(line).strip(" \t")

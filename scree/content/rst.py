"""reStructuredText (Sphinx) into chunks and the words embedded of them (issue 33; pure: no I/O).

Sections come from over- and underline adornments, their levels in the order the document first uses each style
(any ASCII punctuation character, as docutils allows); the heading trail and the size caps are markdown's
(scree.content.chunking). One line scanner (_Scanner) says what each line is, for the chunker and for what is
embedded alike: code (`::` literal blocks, `.. code-block::` and kin), hidden (comments, substitution definitions,
targets, directive options, `.. toctree::`, `.. auto*::` and `.. include::` bodies) or text. Nothing is ever
followed: an include directive is a line like any other. The scanner holds one open block, never a stack, so
nested directives of any depth and 100,000 adornment lines cost one pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from scree.content.chunking import (
    HEADING_CAP_BYTES,
    Chunk,
    ChunkBuilder,
    cap_utf8,
    push_heading,
)
from scree.content.embedded_lines import EmbeddedLines, thin_words
from scree.content.lookahead import Lookahead, open_section

# A run of one ASCII punctuation character (docutils' adornment characters), three or more, alone on its line.
_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1{2,}[ \t]*")
_DIRECTIVE = re.compile(r"[ \t]*\.\.[ \t]+([A-Za-z0-9][\w:+.-]*?)::(?:[ \t]+(.*))?")
_EXPLICIT = re.compile(r"[ \t]*\.\.(?:[ \t]|$)")  # any explicit markup start: directive, target, comment ...
_FOOTNOTE = re.compile(r"([ \t]*)\.\.[ \t]+\[[^\]\s]+\][ \t]*")  # `.. [1] text`, `.. [#note] text`: words stay
_OPTION = re.compile(r"[ \t]*:[^:\s][^:]*:(?:[ \t]|$)")  # `:linenos:`, `:caption: x`
_FIELD = re.compile(r"\A([ \t]*):([^:\s`][^:`]*):(?=[ \t]|$)")  # a field list item `:param name: text`
_TITLE_FIELD = re.compile(r":title:[ \t]+(.+)")
_ROLE = re.compile(r"(?::[\w.+-]+)+:`((?:[^`\\]|\\.)+)`")
_REFERENCE = re.compile(r"`([^`]+?)(?:\s*<[^<>`]*>)?`__?")  # `text <url>`_ and `text`_
_LITERAL = re.compile(r"``(.+?)``")
_INTERPRETED = re.compile(r"`([^`]+)`")
_NAMED_REF = re.compile(r"\b([A-Za-z][\w-]*[A-Za-z0-9])__?(?=[\s.,;:!?)]|$)")  # `Flask_` -> Flask
_FOOTNOTE_REF = re.compile(r"[ \t]?\[(?:#[\w-]*|\*|\d+)\]_")
_SUBSTITUTION = re.compile(r"\|([^|\s][^|]*)\|(?:__?)?")
_TABLE_RULE = re.compile(r"[ \t]*(?:\+[-=+]+\+|=+(?:[ \t]+=+)+|-+(?:[ \t]+-+)+)[ \t]*")
_LINE_BLOCK = re.compile(r"([ \t]*)\|[ \t]+")

# Directives whose body is code, as `::` literal blocks are (Sphinx's and docutils').
CODE_DIRECTIVES = frozenset(
    {"code-block", "code", "sourcecode", "doctest", "testcode", "testoutput", "testsetup", "testcleanup", "ipython",
     "parsed-literal", "productionlist", "math", "prompt"}
)  # fmt: skip
# Directives whose body is for the build, not for readers: out of what is embedded, in the file's lines.
HIDDEN_DIRECTIVES = frozenset(
    {"toctree", "include", "literalinclude", "highlight", "raw", "meta", "index", "tabularcolumns", "currentmodule",
     "module", "default-role", "default-domain", "role", "highlightlang", "contents", "sectnum", "image",
     "graphviz", "uml", "mermaid", "jinja", "program", "cssclass", "class", "title"}
)  # fmt: skip
# How Sphinx writes these out: `.. versionadded:: 2.0` reads "Added in version 2.0".
DIRECTIVE_WORDS = {
    "versionadded": "Added in version",
    "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version",
    "versionremoved": "Removed in version",
    "seealso": "See also",
}

TEXT, CODE, HIDDEN, BLANK = "text", "code", "hidden", "blank"
_OPEN_CODE, _DIRECTIVE_LINE = "open-code", "directive"
_BLOCK_TAG = "rst-"  # Chunk.open_fence of a chunk that starts inside a block: ("rst-code" | "rst-hidden", indent)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


@dataclass(slots=True)
class _Scanner:
    """What each line is, one line at a time: one open block (kind, indent of the line that opened it) at most."""

    block: str | None = None  # CODE or HIDDEN while inside a block
    block_indent: int = 0
    block_options: bool = False  # before the block's first blank line: `:option:` lines are hidden
    literal_indent: int = -1  # a paragraph at this indent ended with `::`: an indented block after it is code
    options_indent: int = -1  # a text directive at this indent: `:option:` lines right after it are hidden
    seen_blank: bool = True

    @classmethod
    def inside(cls, state: tuple[str, int] | None) -> _Scanner:
        """A scanner for a chunk that starts inside the block `state` (Chunk.open_fence), or outside any."""
        if state is None or not state[0].startswith(_BLOCK_TAG):
            return cls()
        return cls(block=state[0][len(_BLOCK_TAG) :], block_indent=state[1])

    def state(self) -> tuple[str, int] | None:
        return None if self.block is None else (_BLOCK_TAG + self.block, self.block_indent)

    def reset(self) -> None:
        """A section title ends every block and pending construct."""
        self.block = None
        self.literal_indent = self.options_indent = -1
        self.seen_blank = False

    def classify(self, line: str) -> str:
        """TEXT, CODE, HIDDEN or BLANK (_OPEN_CODE and _DIRECTIVE_LINE for the line that opens a code block or a
        text directive)."""
        stripped = line.strip(" \t")
        if not stripped:
            self.seen_blank = True
            self.block_options = False
            self.options_indent = -1
            return BLANK
        indent = _indent(line)
        seen_blank, self.seen_blank = self.seen_blank, False
        if self.block is not None:
            if indent > self.block_indent:
                if self.block_options and _OPTION.match(line):
                    return HIDDEN
                self.block_options = False
                return self.block
            self.block = None
        if self.options_indent >= 0:
            if indent > self.options_indent and _OPTION.match(line):
                return HIDDEN
            self.options_indent = -1
        if self.literal_indent >= 0:
            literal, self.literal_indent = self.literal_indent, -1
            if seen_blank and indent > literal:
                self._open(CODE, literal, options=False)
                return CODE
        if stripped.startswith(".."):
            kind = self._explicit(line, indent)
            if kind is not None:
                return kind
        if stripped.endswith("::"):
            self.literal_indent = indent
        return TEXT

    def _explicit(self, line: str, indent: int) -> str | None:
        """An explicit markup line: a directive, a footnote (text), or a target, substitution or comment (hidden)."""
        directive = _DIRECTIVE.fullmatch(line)
        if directive is not None:
            name = directive_name(directive.group(1))
            if name in CODE_DIRECTIVES:
                self._open(CODE, indent, options=True)
                return _OPEN_CODE
            if name in HIDDEN_DIRECTIVES or name.startswith("auto"):
                self._open(HIDDEN, indent, options=False)
                return HIDDEN
            self.options_indent = indent
            return _DIRECTIVE_LINE
        if _FOOTNOTE.match(line):
            return None
        if _EXPLICIT.match(line):  # a comment, a hyperlink target `.. _x:`, a substitution definition `.. |x| ...`
            self._open(HIDDEN, indent, options=False)
            return HIDDEN
        return None

    def _open(self, kind: str, indent: int, *, options: bool) -> None:
        self.block, self.block_indent, self.block_options = kind, indent, options
        self.literal_indent = self.options_indent = -1


def directive_name(raw: str) -> str:
    """`py:function` -> `function`, `Code-Block` -> `code-block`: the name without its domain."""
    return raw.rpartition(":")[2].lower()


def is_adornment(line: str) -> bool:
    return _ADORNMENT.fullmatch(line) is not None


def _is_title(title: str, adornment: str) -> bool:
    """docutils' rule: an underline as long as the title, or (with a warning) at least 4 characters."""
    length = len(adornment.rstrip(" \t"))
    return length >= 4 or length >= len(title.strip())


def iter_chunks(text: str) -> Iterator[Chunk]:
    """An rst document's chunks, each as it closes (R-C1..R-C3 as for markdown: exact source line ranges)."""
    builder = ChunkBuilder()
    scanner = _Scanner()
    styles: list[tuple[str, bool]] = []  # (character, overlined) in the order the document first uses them
    trail: list[tuple[int, str]] = []
    lines = Lookahead(text)
    previous_blank = True  # the start of the document counts as a blank line before a title
    seen_heading = False

    while True:
        if builder.chunks:
            yield from builder.chunks
            builder.chunks.clear()
        popped = lines.pop()
        if popped is None:
            break
        line_no, line = popped
        before = scanner.state()
        kind = scanner.classify(line)
        heading = _heading_at(line, kind, previous_blank, lines.peek) if line[:1] not in (" ", "\t") else None
        if heading is not None:
            style, title, used = heading
            scanner.reset()
            if style not in styles:
                styles.append(style)
            seen_heading = True
            title_lines = [(line_no, line), *lines.take(used - 1)]
            open_section(builder, trail, styles.index(style) + 1, heading_words(title), title_lines)
            previous_blank = False
            continue
        if not seen_heading and not trail and kind == TEXT and (found := _TITLE_FIELD.fullmatch(line.rstrip())):
            push_heading(trail, 1, heading_words(found.group(1)))
            builder.heading = trail[0][1]
        in_block = kind in (CODE, HIDDEN) and before is not None
        builder.add(line, line_no, in_fence=kind == CODE, inside=before if in_block else None)
        previous_blank = kind == BLANK
    builder.close()
    yield from builder.chunks


def _heading_at(
    line: str, kind: str, previous_blank: bool, peek: Callable[[int], str | None]
) -> tuple[tuple[str, bool], str, int] | None:
    """((character, overlined), title, lines used) when a section title starts at this line, else None."""
    if kind != TEXT or not previous_blank:
        return None
    following = peek(1)
    if following is None or not following.strip():
        return None
    if is_adornment(line):  # an overline: title, then the same adornment under it; else a transition
        under = peek(2)
        if under is None or is_adornment(following) or under.rstrip() != line.rstrip():
            return None
        return (line[0], True), following.strip(), 3
    if is_adornment(following) and not line.rstrip().endswith("::") and _is_title(line, following):
        return (following[0], False), line.strip(), 2
    return None


def heading_words(title: str) -> str:
    """A title as the trail shows it: its words (inline_words), capped; a long title is cut before any regex runs."""
    return cap_utf8(inline_words(title[: HEADING_CAP_BYTES * 4]).strip(), HEADING_CAP_BYTES)


def thin(text: str) -> bool:
    """Little to read besides the title (embedded_lines.thin_words): a toctree page, a one-line section."""
    head = text.split("\n", 3)[:3]
    titled = len(head) > 1 and (is_adornment(head[0]) or is_adornment(head[1]))
    return thin_words(readable(text), titled)


def chunk_rst(text: str) -> list[Chunk]:
    return list(iter_chunks(text))


def inline_words(line: str) -> str:
    """A line's words without inline markup: `:func:`os.path.join`` -> os.path.join, `:ref:`label <target>`` ->
    label, ``literal`` -> literal, `text <url>`_ -> text, |name| -> name, footnote references go."""
    if "`" in line:
        if ":`" in line:
            line = _ROLE.sub(_role_words, line)
        line = _REFERENCE.sub(r"\1", line)
        line = _LITERAL.sub(r"\1", line)
        line = _INTERPRETED.sub(r"\1", line)
    if "_" in line:
        line = _FOOTNOTE_REF.sub("", line) if "]_" in line else line
        line = _NAMED_REF.sub(r"\1", line)
    if "|" in line:
        line = _SUBSTITUTION.sub(r"\1", line)
    return line


def _role_words(found: re.Match[str]) -> str:
    content = found.group(1).replace("\\", "")
    label, opened, target = content.rpartition("<")  # `label <target>` (not a pattern: `.*?\s*<` is quadratic)
    if opened and target.endswith(">") and ">" not in target[:-1]:
        return label.rstrip() or target[:-1]
    return content.lstrip("~!./")


def readable(text: str, state: tuple[str, int] | None = None) -> str:
    """What is embedded of an rst chunk: its words with roles, references and literals as text; each code block as
    a fence with its first lines (EmbeddedLines); no adornments, comments, targets, substitution definitions,
    directive options, toctree/auto*/include bodies."""
    scanner = _Scanner.inside(state)
    out = EmbeddedLines()
    for line in text.split("\n"):
        kind = scanner.classify(line)
        if kind == BLANK:
            out.blank()
        elif kind == CODE:
            out.code(line.strip(" \t"))
        elif kind == _OPEN_CODE:
            directive = _DIRECTIVE.fullmatch(line)
            out.open_code((directive.group(2) or "").strip() if directive else "")
        elif kind == _DIRECTIVE_LINE:
            out.words(_directive_words(line))
        elif kind == TEXT:
            out.words(_text_words(line))
    return out.text()


def _directive_words(line: str) -> str:
    directive = _DIRECTIVE.fullmatch(line)
    if directive is None:
        return ""
    name = directive_name(directive.group(1))
    argument = inline_words(directive.group(2) or "").strip()
    label = DIRECTIVE_WORDS.get(name, name.replace("-", " "))
    return f"{label} {argument}".strip()


def _text_words(line: str) -> str:
    if is_adornment(line) or _TABLE_RULE.fullmatch(line):
        return ""
    footnote = _FOOTNOTE.match(line)
    if footnote is not None:
        line = footnote.group(1) + line[footnote.end() :]
    if line.lstrip(" \t").startswith(":"):
        line = _FIELD.sub(r"\1\2:", line, count=1)
    elif line.lstrip(" \t").startswith("| "):
        line = _LINE_BLOCK.sub(r"\1", line, count=1)
    if line.rstrip().endswith("::"):
        line = line.rstrip()[:-1].rstrip(" :") + (":" if line.strip() != "::" else "")
    return inline_words(line).strip(" \t")


# --- recognising rst in a .txt file (Django names its rst sources .txt) ---

SNIFF_BYTES = 64_000  # issue 33: the head of a .txt file that decides whether it is rst
_TITLE_CHARS = "=-~^\"'*#+`:._"
SNIFF_LINE_CHARS = 400
_SNIFF_DIRECTIVE = re.compile(r"[ \t]*\.\.[ \t]+[A-Za-z][\w:-]*::")
_SNIFF_ROLE = re.compile(r":[a-z][\w:-]*:`[^`\n]+`")


def looks_like_rst(name: str, text: str) -> bool:
    """Is this .txt file reStructuredText? Titles with adornment lines under them, directives and roles decide:
    two titles, or a title and a directive or role, or two directives. A wrong guess costs quality only. Each line
    is looked at up to SNIFF_LINE_CHARS characters, so a hostile line costs no more than a short one."""
    markup = titles = 0
    previous = before_previous = ""
    for whole in text[:SNIFF_BYTES].split("\n"):
        line = whole[:SNIFF_LINE_CHARS]
        if _SNIFF_DIRECTIVE.match(line) or (":`" in line and _SNIFF_ROLE.search(line)):
            markup += 1
        elif (
            previous.strip()
            and (not before_previous.strip() or is_adornment(before_previous))
            and is_adornment(line)
            and line[0] in _TITLE_CHARS
            and _is_title(previous, line)
            and not is_adornment(previous)
        ):
            titles += 1
        if markup >= 2 or titles >= 2 or (titles and markup):
            return True
        before_previous, previous = previous, line
    return False

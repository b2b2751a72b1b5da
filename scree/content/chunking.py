"""Split markdown text into chunks with a heading trail and a source line range (pure: no I/O).

The Chunk record, the size caps and the ChunkBuilder here are every format's (scree.content.formats is the table
of formats; rst.py, asciidoc.py and plaintext.py are the other chunkers)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

SOFT_LIMIT_BYTES = 2500  # R-C2: a chunk this big closes at the next blank line outside a fence
HARD_LIMIT_BYTES = 3500  # R-C2: no chunk text is ever bigger, even mid-fence
HEADING_CAP_BYTES = 120  # R-C1: each heading in the trail is cut to this many UTF-8 bytes
# Longer heading lines keep their anchors and closing hashes: the patterns that find them take time growing with the
# square of a line's length (a 100 kB heading of `{/*` took seconds); no real heading is near this long.
HEADING_CLEANED_CHARS = 2048
HEADING_SEPARATOR = " > "  # R-C1: `API > Authentication > Tokens`

FRONT_MATTER_OPEN = "---"  # R-C1: only a first line like this starts YAML front matter
FRONT_MATTER_CLOSE = ("---", "...")
TOML_FRONT_MATTER = "+++"  # Hugo's TOML front matter opens and closes with this line (KEDA's 2,155 pages)
# The Go website's pages (golang/website) hold a JSON object in an HTML comment: `<!--{`, `"Title": ...`, `}-->`.
JSON_FRONT_MATTER = ("<!--{", "}-->")
BYTE_ORDER_MARK = "\ufeff"

# CommonMark ATX heading: up to 3 spaces, 1-6 `#`, then a space, a tab or the end of the line.
_ATX_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+|$)")
# CommonMark's setext heading: a one-line paragraph over a line of `=` (level 1) or `-` (level 2), at most 3 spaces in
# (requests' HISTORY.md: `2.32.3 (2024-05-29)` over dashes). Two characters at least: a lone `-` under a line reads
# more often as a stray list marker than as a heading.
_UNDERLINE = r"(={2,}|-{2,})[ \t]*"
_SETEXT_UNDERLINE = re.compile(rf" {{0,3}}{_UNDERLINE}")
# A line that cannot be a setext heading's text: blank, indented code, a list item, a quote, a table row, HTML, a link
# definition or an underline itself.
_NOT_SETEXT_TEXT = re.compile(
    rf"[ \t]*$| {{4}}|\t|[ \t]*(?:[-*+>|<]|[0-9]+[.)](?:[ \t]|$)|\[[^\]\n]+\]:|{_UNDERLINE}$)"
)
# An optional closing run of `#` is dropped if a space precedes it (or it is all there is).
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")
MIN_SHOWN_BYTES = 8  # #11: a chunk with fewer bytes than this besides spaces (its heading aside) is no hit
_WORD_CHARACTER = re.compile(r"[^\W_]")
THIN_BYTES = 48  # issue 25: a chunk with fewer bytes of words than this (its heading aside) is thin (one short line)
# ... and so is one that points elsewhere: fewer bytes than this besides its links' words (SvelteKit's "Further
# reading: You may wish to refer to [Cloudflare's documentation for deploying a SvelteKit site on Cloudflare
# Pages](…)" was the first hit for "How do I deploy to Cloudflare Pages?", its link's words matching). At THIN_BYTES a
# changelog's entries ("fix: handle missing package.json gracefully ([#13691](…))") were thin too: 226 chunks of
# SvelteKit's 2,746 against 2 at this bound, 6 of Electron's 3,427 (link lists, "See [`crashReporter.…`](#…).").
POINTER_BYTES = THIN_BYTES // 2
_ITEM_MARK = r"[ \t]*(?:[-*+]|[0-9]+[.)])[ \t]+"  # a list item's marker, which the item patterns below open with
_LIST_MARK = re.compile(_ITEM_MARK)
# A list item that is a link (inline, reference, autolink or bare URL) and at most a short description: "SEE ALSO".
_LINK_ITEM = re.compile(
    _ITEM_MARK + r"(?:\[[^\]\n]*\](?:\([^)\n]*\)|\[[^\]\n]*\])?|<[^<>\s]+>|[a-z]+://\S+)"
    r"[ \t]*(?:[-:\u2013\u2014][^\n]{0,80})?"
)
# The words a "Next steps" item opens with to send the reader to another page (_pointer_item)
_POINTER_WORDS = re.compile(
    r"(?:learn|see|read|check\s+out|refer\s+to|visit|explore|follow|go\s+to|find\s+out|discover|continue|try)\b",
    re.IGNORECASE,
)
# A link reference definition, `[timeouts]: ../features/retries-and-timeouts/`: the target of a reference link.
_LINK_DEFINITION = re.compile(r" {0,3}\[[^\]\n]+\]:[ \t]*\S+.*")
# An empty HTML anchor, `<a name="x"></a>`, in any case.
_EMPTY_ANCHOR = r"(?i:<a(?:\s+(?:id|name)\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>]+))+\s*/?>\s*(?:</a>)?)"
# Lines around a list of links that carry no words: a component's own tag (`<Cards>`, `</Cards>`), a thematic break,
# an empty anchor (Laravel's docs put one above each heading, so it ends the list of the page's sections before).
_MARKUP_LINE = re.compile(rf"[ \t]*(?:</?[A-Z][\w.]*(?:\s[^<>]*)?/?>|(?:[-*_][ \t]*){{3,}}|{_EMPTY_ANCHOR})[ \t]*")
# A link's description as an item of its own after it (Clerk's cards: `- [Clerk](...)`, `- Learn how to access Clerk
# in your app.`): one sentence, no link of its own (a sibling item, Astro's "`.mdx` (with the [MDX integration](...))"
# among links to the page's sections, is content).
_DESCRIPTION_ITEM = re.compile(_ITEM_MARK + r"[^\[\]()\n]*[.!]")
# A list of links may follow a line this long at most that introduces it (ending in ":"): Linkerd's "Learn More"
# section, "To get started with the Gateway API types, you can:" over four links, had come first for "How do I
# configure retries for a route?", its links' words matching.
INTRO_CHARS = 120
# A bare URL or an autolink: a link whose only words are its target, which thin() reads as no words (a changelog's
# "### Download" over one release URL has nothing to read).
_BARE_LINK = re.compile(r"<[a-z][a-z0-9+.-]*:[^<>\s]*>|\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
# An HTML comment block (CommonMark's HTML block of type 2) runs from a line opening one to the line that closes it;
# the lines between are no headings: Apache projects open their pages with the license in one, its lines starting
# with `#` (APISIX's 35 English pages: "# Licensed to the Apache Software Foundation..." had been 16 headings).
COMMENT_OPEN, COMMENT_CLOSE = "<!--", "-->"
_COMMENT_OPEN = re.compile(r" {0,3}<!--")
# What a reader of the rendered page does not see before its first heading (_prose).
_HIDDEN_BLOCK = re.compile(r"<!--.*?(?:-->|$)|<(script|style)\b.*?(?:</\1\s*>|$)", re.DOTALL | re.IGNORECASE)
_TAG_OR_ENTITY = re.compile(r"<[^<>]*>|&#?\w+;")
_TITLE_WORD = re.compile(r"[^\W\d_]{2,}")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
# What a page renders as no words to read: an HTML script or style block (VitePress's `<script setup>` of component
# imports above a page's title) and a line that is a Hugo shortcode alone (`{{< youtube id="..." >}}`), whose
# parameters read as words but show a widget.
_WIDGETS = re.compile(
    r"^[ \t]*<(script|style)\b[^>]*>.*?(?:</\1\s*>|\Z)|^[ \t]*\{\{[<%].*?[%>]\}\}[ \t]*$",
    re.DOTALL | re.IGNORECASE | re.MULTILINE,
)
# Lines that could be a heading or a fence start with one of these after at most 3 spaces.
_MARKER = re.compile(r" {0,3}[#`~]")
# Issue 25: a top-level `title:` of the front matter (Docusaurus, Hugo, Jekyll; `title =` in TOML), its value bare or
# quoted; its key in any case, as Hugo reads it (APISIX's pages open with `Title: Router Radixtree`).
_TITLE = re.compile(
    r"""(?i:title)[ \t]*[:=][ \t]*(?:"((?:[^"\\]|\\.)*)"|'((?:[^']|'')*)'|([^"'#|>\s][^#]*?))[ \t]*(?:#.*)?"""
)
# ... or a YAML block scalar's (`title: |-`, `title: >`), its text on the more indented lines below.
_BLOCK_TITLE = re.compile(r"(?i:title)[ \t]*:[ \t]*[|>][0-9+-]{0,2}[ \t]*(?:#.*)?")
# A TOML table header, `[params]` or `[[menu.main]]`: the keys after it are the table's, not the page's.
_TOML_TABLE = re.compile(r"""\[\[?[ \t]*[\w."' -]+[ \t]*\]\]?(?:[ \t]*#.*)?""")
# R-I1: `scree: ignore` (TOML: `scree = "ignore"`) as a top-level key of the front matter, the value bare or quoted.
_OPT_OUT = re.compile(r"""scree[ \t]*[:=][ \t]*(?:ignore|"ignore"|'ignore')[ \t]*(?:#.*)?""", re.IGNORECASE)

# What docs tools put in a heading for links and styling, not words (#11): a trailing attribute list of ids, classes
# and key=value pairs (kramdown/MkDocs attr_list `{: #id }`, `{ #id }`, Pandoc `{#id .class key=val}`, Hugo and
# Docusaurus `{#id}`); MDX comments `{/* id */}`; HTML comments; empty HTML anchors `<a name="x"></a>`.
_ATTR_VALUE = r"""(?:"[^"\n]*"|'[^'\n]*'|[^\s{}"']*)"""
_ATTR_ITEM = rf"(?:[#.][^\s{{}}#.][^\s{{}}]*|[A-Za-z_:][\w.:-]*={_ATTR_VALUE})"
_HEADING_ATTRIBUTES = re.compile(rf"[ \t]*\{{:?[ \t]*{_ATTR_ITEM}(?:[ \t]+{_ATTR_ITEM})*[ \t]*\}}[ \t]*$")
_HEADING_NOISE = re.compile(
    r"\{/\*.*?\*/\}"  # MDX comment
    r"|<!--.*?-->"  # HTML comment
    rf"|{_EMPTY_ANCHOR}",  # empty anchor
    re.IGNORECASE,
)
# HTML tags in a heading outside its code spans go, the words between them stay: a known inline or layout element's
# (`<img src=…>` before a README's title, `<sup>1</sup>`, `<picture><source …>`) and any tag with attributes (React
# Native's `### `cursor` <div className="label ios">iOS</div>`, Vitess's `<span style="color:red">`, a `<Badge
# text="beta" />`), with the closing tags of those; a placeholder (`--prefix <prefix>`, `Array<T>`) stays.
_HEADING_ELEMENTS = frozenset(
    (
        "a abbr b big br center code del div em font i img ins kbd mark p picture s small source span strong sub sup u"
    ).split()
)
_HEADING_TAG = re.compile(r"<(/?)([A-Za-z][\w.:-]*)((?:\s[^<>]*)?)/?>")
_CODE_SPAN = re.compile(r"(`+)[^`]*?\1")
# Inline links and images keep their words and lose their targets: `[the guide](../guide.md#setup)` -> `the guide`.
_LINK = re.compile(r"!?\[([^\]\n]*)\]\((?:[^()\s]|\([^()\s]*\))*(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'))?\)")
# Markup that costs the model tokens and carries no words (#11), left out of the embedded text only: reference links
# keep their words (`[the guide][guide]`, `[`int`][]`); formatting HTML tags go (`<br>`, `<div class="grid">`, not
# `<name>` placeholders); table rule rows go; admonition and block markers keep their words (`!!! tip "Learn more"`
# -> `tip Learn more`, `/// version-added | v2.13` -> `version added v2.13`, a closing `///` goes).
_REFERENCE_LINK = re.compile(r"\[([^\]\n]+)\]\[[^\]\n]*\]")
_HTML_TAG = re.compile(
    r"</?(?:a|b|i|em|strong|br|p|div|span|figure|figcaption|img|details|summary|sup|sub|kbd|code|pre|table|tr|td|th"
    r"|ul|ol|li|hr|center|small|picture|source)(?:\s[^<>]*)?/?>",
    re.IGNORECASE,
)
_TABLE_RULE = re.compile(r"[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*(?:\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*")
_BLOCK_MARKER = re.compile(r"([ \t]*)(?:!!!|\?\?\?\+?|///)[ \t]*([\w-]*)(?:[ \t]*\|)?[ \t]*(.*)")
_FENCE_ATTRIBUTES = re.compile(r"[ \t]*\{[^}]*\}")  # ```python {test="skip"}: tool options, not words
CODE_LINES_EMBEDDED = 5  # #11: a fence's first lines are embedded; the rest is left to keyword search
EMBED_FORMAT = "5"  # R-F3, #11: bumped whenever embed_text() or the heading trail changes what a chunk's vector is of
# Bumped whenever a format's chunker cuts or heads a file's chunks otherwise (a heading trail's words, a title from
# front matter, the lines a comment holds): an index recording an older one has every file chunked again once, at
# the writer's next full sync, the vectors of unchanged text reused (Syncer.sync_all). 1: stop 54's trails (HTML
# tags in headings) and the comments and titles of the stop before, which had reached a file only when it changed.
# 2: the Go website's JSON front matter (JSON_FRONT_MATTER) titles its pages. 3: setext headings (`Title` over `===`).
# 4: a front matter title over text stays above the page's H1s (_title_above_sections).
CHUNKER_REVISION = 4
# Issue 25: lines of an .mdx file that are code for the site, not words: ES module `import`/`export` lines, MDX
# comments, and JSX component tags (`<Tabs>`, `<TabItem value="linux" label="Linux">`, `</TabItem>`, `<Foo />`),
# which issue 34 takes out wherever they are on a line (a 985 KB line of JSX is cut into pieces), and at a piece's
# edges where a tag was cut. No pattern nests a quantifier: the old whole-line one backtracked exponentially on a
# piece cut mid-tag.
_MDX_CODE_LINE = re.compile(r"[ \t]*(?:(?:import|export)[ \t{*].*|\{/\*.*\*/\}[ \t]*)")
_JSX_TAG = re.compile(r"</?[A-Z][\w.]*(?:\s[^<>]*)?>")
_JSX_CUT_HEAD = re.compile(r"[^<>=]*=[^<>]*>")  # the end of a tag cut at the piece's start: attributes, then `>`
_JSX_CUT_TAIL = re.compile(r"</?[A-Z][\w.]*(?:\s[^<>]*)?$")  # a tag cut at the piece's end


@dataclass(frozen=True, slots=True)
class Span:
    """What every record of a chunk holds, as chunking cut it, the store writes it and a search shows it.

    `text` is the source lines from `start_line` to `end_line` joined with LF, with blank lines
    (spaces and tabs only) written as empty lines; the first chunk of a section starts with the
    section's heading line as written. Pieces of a line longer than HARD_LIMIT_BYTES are chunks of
    their own, so several such chunks can share one line number.
    """

    ordinal: int  # 0-based position in the file
    heading: str  # heading trail joined with " > ", "" before the first heading
    text: str
    start_line: int  # first non-blank source line, 1-based, in the original file's numbering (R-C3)
    end_line: int  # last non-blank source line, inclusive


@dataclass(frozen=True, slots=True)
class Chunk(Span):
    """One piece of a markdown file as it is stored, embedded and shown."""

    # The fence (character, run length) a chunk cut mid-fence by the hard cap starts inside, so that what is
    # embedded reads its first lines as code (#11); None for a chunk that starts outside fences.
    open_fence: tuple[str, int] | None = None


def normalise_newlines(text: str) -> str:
    """CRLF and lone CR become LF (R-C3 counts lines after this)."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def split_front_matter(text: str) -> tuple[str | None, str, int]:
    """Return (front matter body or None, the rest, lines the front matter used) for LF-normalised text.

    Front matter is a first line `---` up to the next `---` or `...` line, Hugo's TOML, a first line `+++` up to
    the next `+++`, or the Go website's JSON, a first line `<!--{` up to a line `}-->` (its body then the JSON
    object, braces included); trailing spaces and tabs are allowed on these lines, and a leading byte order mark is
    ignored. Never closed, it is not front matter.
    """
    start = 1 if text.startswith(BYTE_ORDER_MARK) else 0
    first_end = text.find("\n", start)
    opening = text[start:first_end].rstrip(" \t") if first_end >= 0 else ""
    if opening not in (FRONT_MATTER_OPEN, TOML_FRONT_MATTER, JSON_FRONT_MATTER[0]):
        return None, text, 0
    closing = {FRONT_MATTER_OPEN: FRONT_MATTER_CLOSE, TOML_FRONT_MATTER: (TOML_FRONT_MATTER,)}.get(
        opening, JSON_FRONT_MATTER[1:]
    )
    body_start = position = first_end + 1
    consumed = 1
    while position <= len(text):
        line_end = text.find("\n", position)
        if line_end < 0:
            line_end = len(text)
        consumed += 1
        if text[position:line_end].rstrip(" \t") in closing:
            body = text[body_start : max(body_start, position - 1)]
            if opening == JSON_FRONT_MATTER[0]:
                body = "{" + body + "}"
            return body, text[line_end + 1 :], consumed
        position = line_end + 1
    return None, text, 0


def opted_out(text: str) -> bool:
    """True when the file's YAML front matter has a top-level `scree: ignore` (R-I1)."""
    front_matter, _, _ = split_front_matter(normalise_newlines(text))
    if front_matter is None:
        return False
    return any(_OPT_OUT.fullmatch(line) for line in _top_level_lines(front_matter))


def front_matter_title(front_matter: str | None) -> str:
    """The front matter's top-level `title:` value, unquoted, or a block scalar's lines joined by spaces (`title: |-`
    over indented lines: Linkerd's posts), or a JSON object's "Title" (any case); "" for none."""
    if front_matter is not None and front_matter.startswith("{"):
        return _json_title(front_matter)
    for line in _top_level_lines(front_matter or ""):
        found = _TITLE.fullmatch(line)
        if found is not None:
            double, single, bare = found.groups()
            if double is not None:
                return re.sub(r"\\(.)", r"\1", double).strip()
            return (single.replace("''", "'") if single is not None else bare).strip()
        if _BLOCK_TITLE.fullmatch(line) is not None:
            return _block_scalar(front_matter or "", line)
    return ""


def _json_title(front_matter: str) -> str:
    """The "Title" of front matter holding a JSON object (JSON_FRONT_MATTER), in any case; "" for none, or for
    anything that is not such an object."""
    try:
        fields = json.loads(front_matter)
    except ValueError:
        return ""
    if not isinstance(fields, dict):
        return ""
    title = next((value for key, value in fields.items() if key.lower() == "title"), "")
    return " ".join(title.split()) if isinstance(title, str) else ""


def _block_scalar(front_matter: str, key_line: str) -> str:
    """The text of the block scalar `key_line` opens (its more indented lines after it), joined by spaces."""
    lines = front_matter.split("\n")
    keys = [line for line in lines if line.strip() and not line.lstrip(" ").startswith("#")]
    top = len(keys[0]) - len(keys[0].lstrip(" ")) if keys else 0  # the top-level keys' indentation
    for at, line in enumerate(lines):
        indent = len(line) - len(line.lstrip(" "))
        if indent == top and line.strip() == key_line:
            words: list[str] = []
            for text in lines[at + 1 :]:
                if text.strip() and len(text) - len(text.lstrip(" ")) <= indent:
                    break
                words.append(text.strip())
            return " ".join(" ".join(words).split())
    return ""


def _top_level_lines(front_matter: str) -> Iterator[str]:
    """The lines of front matter that hold its top-level keys, without their indentation or trailing blanks: those
    indented as its first key is, up to a TOML table (`[params]`). YAML lets the whole mapping be indented
    (Longhorn's pages open with `  title: Create a Snapshot`), and a key indented deeper belongs to the one above it
    (`seo:` / `  title:`)."""
    indent: str | None = None
    for line in front_matter.split("\n"):
        text = line.lstrip(" ")
        if not text.strip() or text.startswith("#"):
            continue
        if indent is None:
            indent = line[: len(line) - len(text)]
        if line[: len(line) - len(text)] != indent:  # a deeper key, or a block scalar's text
            continue
        if _TOML_TABLE.fullmatch(text.rstrip(" \t")):
            return
        yield text.rstrip(" \t")


Readable = Callable[[str, "tuple[str, int] | None"], str]  # (chunk text, block open at its start) -> embedded words


def embed_text(path: str, chunk: Chunk, readable: Readable | None = None) -> str:
    """The text sent to the embedder for a chunk (R-C4): `path`, the heading trail, a blank line, then the chunk's
    text as its format's readable-line rules keep it (scree.content.formats picks them; markdown's by default)."""
    words = (readable or readable_markdown)(chunk.text, chunk.open_fence)
    return f"{path}\n{chunk.heading}\n\n{words}"


def readable_markdown(text: str, fence: tuple[str, int] | None = None) -> str:
    """What is embedded of a markdown chunk's text: heading lines without their anchors (the trail has none)."""
    return _readable(text, fence)


def readable_mdx(text: str, fence: tuple[str, int] | None = None) -> str:
    """What is embedded of an .mdx chunk's text: markdown's, without import/export lines (issue 25) and JSX tags
    wherever they are on a line (issue 34)."""
    return _readable(text, fence, _mdx_words)


def keyword_mdx(text: str) -> str:
    """What keyword search weighs of an .mdx chunk's text (issue 34): its lines as written, but outside fences
    import/export lines and MDX comments emptied and JSX tags taken out wherever they are on a line, so a page of
    component tags never outranks the prose that holds the query's words. Line for line, from the chunk's text
    alone: the index computes it again to delete what it added (scree.store.schema)."""
    if "<" not in text and ">" not in text and "import" not in text and "export" not in text and "{/*" not in text:
        return text
    out: list[str] = []
    fence: tuple[str, int] | None = None
    for line in text.split("\n"):
        if fence is not None:
            if _closes_fence(line, fence):
                fence = None
            out.append(line)
            continue
        fence = _opens_fence(line) if _MARKER.match(line) is not None else None
        out.append(line if fence is not None else (_mdx_words(line) or ""))
    return "\n".join(out)


def _mdx_words(line: str) -> str | None:
    """An .mdx line outside fences as it is embedded: None for an import/export line or an MDX comment; else without
    its JSX tags (None when they were all of it)."""
    return None if _MDX_CODE_LINE.fullmatch(line) is not None else _without_jsx(line)


def strip_heading_anchors(title: str) -> str:
    """A heading's words without the anchors and attribute lists docs tools add (#11); the file keeps them.

    `Request body { #request-body }` -> `Request body`; `Usage {/*usage*/}` -> `Usage`; `{#id .cls key=v}`,
    `{: #id }` and `<a name="x"></a>` go too. Braces that hold code (`Use {} here`, `{x: 1}`) stay.
    """
    if ("{" not in title and "<" not in title) or len(title) > HEADING_CLEANED_CHARS:
        return title
    cleaned = _HEADING_ATTRIBUTES.sub("", _without_tags(_HEADING_NOISE.sub("", title)))
    return " ".join(cleaned.split()) if cleaned != title else title


def _without_tags(title: str) -> str:
    """`title` without its HTML tags outside code spans (_HEADING_TAG), each replaced by a space."""
    if "<" not in title:
        return title
    stripped: set[str] = set()

    def tag(found: re.Match[str]) -> str:
        closing, name, rest = found.group(1), found.group(2).lower(), found.group(3)
        if closing:
            return " " if name in _HEADING_ELEMENTS or name in stripped else found.group(0)
        if name in _HEADING_ELEMENTS or "=" in rest:
            stripped.add(name)
            return " "
        return found.group(0)

    out: list[str] = []
    at = 0
    for span in _CODE_SPAN.finditer(title):
        out.append(_HEADING_TAG.sub(tag, title[at : span.start()]))
        out.append(span.group(0))
        at = span.end()
    out.append(_HEADING_TAG.sub(tag, title[at:]))
    return "".join(out)


def text_hash(model_identity: str, embedded: str) -> str:
    """Cache key of a vector: sha256 hex of model identity, NUL, embedded text (R-E7).

    Encoded with surrogatepass so a path decoded from undecodable file-name bytes still hashes.
    """
    digest = hashlib.sha256(model_identity.encode("utf-8", "surrogatepass"))
    digest.update(b"\0")
    digest.update(embedded.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def chunk_markdown(text: str) -> list[Chunk]:
    """Split a markdown document into chunks (R-C1, R-C2, R-C3); newlines are normalised here. A front matter
    `title:` heads the trail as an H1 would (a page's own `# ` heading replaces it): Docusaurus pages have no H1."""
    return list(iter_chunks(text))


def _lines(body: str) -> Iterator[str]:
    """body.split("\n") one line at a time, without a list of every line of a large file."""
    start = 0
    while (end := body.find("\n", start)) >= 0:
        yield body[start:end]
        start = end + 1
    yield body[start:]


def iter_chunks(text: str) -> Iterator[Chunk]:
    """chunk_markdown's chunks one at a time, as each closes: a very large file's sync holds a slice of them, not
    all (issue 25)."""
    text = _clean(text)
    front_matter, body, line_offset = split_front_matter(text)
    builder = _ChunkBuilder()
    trail: list[tuple[int, str]] = []
    title = _heading_title(front_matter_title(front_matter))
    if title:  # issue 25: the page's title, as a docs site shows it: an H1 over what comes before any `#` heading
        _push_heading(trail, 1, title)
        builder.heading = title
    headed = False  # a heading of the page's own has come
    fence: tuple[str, int] | None = None  # (fence character, run length) of the open fence
    comment = False  # inside an HTML comment block: its lines are no headings or fences (CommonMark)
    held: tuple[str, int] | None = None  # a one-line paragraph a setext underline on the next line makes a heading
    paragraph_may_start = True  # the line before was blank or a heading, or this is the first line
    for line_no, line in enumerate(_lines(body), start=line_offset + 1):
        if builder.chunks:
            yield from builder.chunks
            builder.chunks.clear()
        if _add_held(builder, trail, held, line, line_no, first=bool(title) and not headed):
            held, paragraph_may_start, headed = None, True, True
            continue
        held = None
        starts_paragraph, paragraph_may_start = paragraph_may_start, _is_blank(line)
        if fence is not None:
            inside = fence
            if _closes_fence(line, fence):
                fence = None
            builder.add(line, line_no, in_fence=True, inside=inside)
            continue
        if comment or _COMMENT_OPEN.match(line) is not None:
            comment = COMMENT_CLOSE not in (line if comment else line.split(COMMENT_OPEN, 1)[1])
            builder.add(line, line_no, in_fence=False)
            continue
        if _MARKER.match(line) is None:
            if starts_paragraph and _NOT_SETEXT_TEXT.match(line) is None:
                held = (line, line_no)  # added with the next line, as its text or as a heading
            else:
                builder.add(line, line_no, in_fence=False)
            continue
        heading = _ATX_HEADING.match(line)
        if heading is not None:
            _open_section(
                builder, trail, len(heading.group(1)), line[heading.end() :], first=bool(title) and not headed
            )
            headed = True
            builder.add(line, line_no, in_fence=False, is_heading=True)
            paragraph_may_start = True
            continue
        fence = _opens_fence(line)
        builder.add(line, line_no, in_fence=fence is not None)
    _add_held(builder, trail, held, "", 0)
    builder.close()
    yield from builder.chunks


def _open_section(builder: _ChunkBuilder, trail: list[tuple[int, str]], level: int, text: str, *, first: bool) -> None:
    """Close the chunk before a heading of `level` and open the heading's: its trail. `first`: the page's first
    heading, under a title from its front matter (_title_above_sections)."""
    if first:
        _title_above_sections(trail, builder, text)
    builder.close()
    _push_heading(trail, level, _heading_title(text))
    builder.heading = HEADING_SEPARATOR.join(title for _, title in trail if title)


def _title_above_sections(trail: list[tuple[int, str]], builder: _ChunkBuilder, heading: str) -> None:
    """At a page's first heading: when the front matter's title heads words a reader sees already (Tokio's
    "Spawning", whose `# Accepting sockets` and `# Concurrency` follow a paragraph; Hugo and Zola show the title over
    the body's H1s) and the heading does not say the title again, the page's headings are its sections, an H1 too:
    the title stays above them. An H1 before any such words, or one restating the title after a tagline
    (Redux Toolkit's `# Redux Toolkit Quick Start` under `title: Quick Start`), replaces it as before."""
    if not (builder.closed or _prose(builder.text())):
        return
    said, title = (set(_TITLE_WORD.findall(text.casefold())) for text in (heading, trail[0][1]))
    if not (said and title and (said <= title or title <= said)):
        trail[0] = (0, trail[0][1])


def _prose(text: str) -> bool:
    """Whether `text` holds words a reader sees: not only blank lines, HTML comments (a licence header), script and
    style blocks, lines of tags and entities (`&nbsp;`) and an .mdx page's import and export lines."""
    text = _HIDDEN_BLOCK.sub("", text)
    return any(
        _TITLE_WORD.search(_TAG_OR_ENTITY.sub("", line)) and _MDX_CODE_LINE.fullmatch(line) is None
        for line in text.split("\n")
    )


def _add_held(
    builder: _ChunkBuilder,
    trail: list[tuple[int, str]],
    held: tuple[str, int] | None,
    line: str,
    line_no: int,
    *,
    first: bool = False,
) -> bool:
    """Add the line `held` back for a setext underline (iter_chunks): as a heading, with `line` under it, when
    `line` is one (True: `line` is taken); else as text (False). Nothing when no line is held. `first`: as
    _open_section's."""
    if held is None:
        return False
    underline = _SETEXT_UNDERLINE.fullmatch(line)
    if underline is None:
        builder.add(held[0], held[1], in_fence=False)
        return False
    _open_section(builder, trail, 1 if underline.group(1)[0] == "=" else 2, held[0].strip(" \t"), first=first)
    builder.add(held[0], held[1], in_fence=False, is_heading=True)
    builder.add(line, line_no, in_fence=False, is_heading=True)
    return True


def below_heading(text: str) -> str:
    """A chunk's text without its heading line (a setext heading's two lines), if it opens with one."""
    if _ATX_HEADING.match(text) is not None:
        return text.partition("\n")[2]
    return text.split("\n", 2)[2] if _setext_heading(text) else text


def _setext_heading(text: str) -> bool:
    """Whether `text` opens with a setext heading: a line that may be a heading's text over an underline."""
    first, _, rest = text.partition("\n")
    return _NOT_SETEXT_TEXT.match(first) is None and _SETEXT_UNDERLINE.fullmatch(rest.partition("\n")[0]) is not None


def too_little_to_show(text: str) -> bool:
    """True for a chunk whose text, its heading line left out, is markup alone (`///`, `---`) or under
    MIN_SHOWN_BYTES bytes of UTF-8 besides spaces (`TBD`; three CJK characters are enough): search never returns one
    as a hit (#11)."""
    text = below_heading(text)
    if COMMENT_OPEN in text:  # a comment is no text to show: a license in one is a chunk of its own
        text = _COMMENT.sub(" ", text)
    text = _without_link_definitions(text)  # nor are link definitions (mdBook's theme page ends in a chunk of them)
    if _WORD_CHARACTER.search(text) is None:
        return True
    return bytes_besides_spaces(text) < MIN_SHOWN_BYTES


def thin(text: str, keep: Callable[[str], str | None] | None = None) -> bool:
    """True for a chunk with very little to read (issue 25: one-line and "SEE ALSO" chunks won hits): its text, the
    heading line left out, is a list of links (each item a link and at most a short description; after a short line
    that introduces it, "To get started, you can:", and with its link definitions, `[timeouts]: ../timeouts/`, left
    out), or, holding no code
    fence, its words as embedded (links without targets, bare URLs not at all, no markup) come to fewer than
    THIN_BYTES bytes besides spaces, or those besides its links' words to fewer than POINTER_BYTES (a sentence that
    points elsewhere). Script and style blocks and lines of a Hugo shortcode alone (_WIDGETS) count as markup, and so
    does what `keep` leaves out of a line (JSX tags; thin_mdx: import and export lines too). Search ranks such a chunk
    lower (ranking.demote_thin), never drops it."""
    keep = keep or _without_jsx
    text = below_heading(text)
    if "{{" in text or "<" in text:
        text = _WIDGETS.sub("", text)
    text = _without_link_definitions(text)
    lines = [line for line in text.split("\n") if line.strip()]
    if _link_list(lines):
        return True
    if any(_FENCE_OPEN.fullmatch(line) for line in lines):  # a code example is content, however short
        return False
    words = _BARE_LINK.sub(" ", _readable(text, keep=keep))
    if bytes_besides_spaces(words) < THIN_BYTES:
        return True
    if "](" not in text:
        return False
    outside = _BARE_LINK.sub(" ", _readable(_LINK.sub(" ", text), keep=keep))
    return bytes_besides_spaces(outside) < POINTER_BYTES


def _without_link_definitions(text: str) -> str:
    """`text` without its link definition lines (`[timeouts]: ../timeouts/`), which render as nothing."""
    if "]:" not in text:
        return text
    return "\n".join(line for line in text.split("\n") if not _LINK_DEFINITION.fullmatch(line))


def thin_mdx(text: str) -> bool:
    """thin() of an .mdx chunk, whose import and export lines and MDX comments render as nothing (_mdx_words): a
    page's block of component imports above its title (Drizzle's docs) had come first for "How do I run
    migrations?", its embedding the file's path alone."""
    return thin(text, _mdx_words)


def _link_list(lines: list[str]) -> bool:
    """Whether a chunk's lines (its heading and link definitions aside) are a list of links: two items or more, each
    a link with at most a short description (on its line, or on the next as an item of its own: Clerk's `<Cards>`),
    after at most a short line that introduces them; component tags and thematic breaks around them are markup."""
    if len(lines) > 2 and len(lines[0]) <= INTRO_CHARS and lines[0].rstrip().endswith(":"):
        lines = lines[1:]
    links = 0
    described = True  # the line before was a description or markup, not a link waiting for one
    for line in lines:
        if _LINK_ITEM.fullmatch(line) or _pointer_item(line):
            links += 1
            described = False
        elif _MARKUP_LINE.fullmatch(line):
            described = True
        elif not described and _DESCRIPTION_ITEM.fullmatch(line) is not None and len(line.strip()) <= INTRO_CHARS:
            described = True
        else:
            return False
    return links > 1


def _pointer_item(line: str) -> bool:
    """Whether a list item sends the reader elsewhere (KubeVela's "What's Next": `* Learn more about [defining
    customized trait](../traits/customize-trait) in CUE.`): it opens with a word that says so (_POINTER_WORDS) and has
    fewer than POINTER_BYTES bytes of words outside its links, as a sentence that points elsewhere has. Words around
    links that say something stay content (React Native's "[Slider](…) is superseded by [@react-native-community/
    slider](…)")."""
    item = _LIST_MARK.match(line)
    if item is None or "](" not in line:
        return False
    rest = line[item.end() :]
    if _POINTER_WORDS.match(rest) is None or _LINK.search(rest) is None:
        return False
    return bytes_besides_spaces(_LINK.sub(" ", rest)) < POINTER_BYTES


def bytes_besides_spaces(text: str) -> int:
    """How many UTF-8 bytes `text` holds besides whitespace: what the thin and too-little rules weigh."""
    return len("".join(text.split()).encode("utf-8", "replace"))


def cap_utf8(text: str, limit: int) -> str:
    """The longest prefix of text whose UTF-8 encoding fits in limit bytes."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", "ignore")


def _clean(text: str) -> str:
    """Normalise newlines, drop a byte order mark and replace lone surrogates so output is valid UTF-8."""
    text = normalise_newlines(text)
    if text.startswith(BYTE_ORDER_MARK):
        text = text[1:]
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def _heading_title(rest: str) -> str:
    """A heading as its trail shows it: no closing hashes or anchors, and a link's words without its target
    (MikroORM's changelog headings `## [5.5.3](https://github.com/…/compare/v5.5.2...v5.5.3) (2022-11-10)` had the
    URL fill the trail's 120 bytes)."""
    rest = rest.rstrip(" \t")
    title = (_CLOSING_HASHES.sub("", rest) if len(rest) <= HEADING_CLEANED_CHARS else rest).strip(" \t")
    if "](" in title and len(title) <= HEADING_CLEANED_CHARS:
        title = _LINK.sub(r"\1", title)
    return cap_utf8(strip_heading_anchors(title), HEADING_CAP_BYTES)


def _without_jsx(line: str) -> str | None:
    """`line` without JSX component tags, also one cut at either end (a piece of a line longer than a chunk); None
    when nothing is left (issue 34)."""
    if "<" not in line and ">" not in line:
        return line
    line = _JSX_TAG.sub("", line)
    head = _JSX_CUT_HEAD.match(line)
    if head is not None:
        line = line[head.end() :]
    line = _JSX_CUT_TAIL.sub("", line)
    return line if line.strip() else None


def _readable(text: str, fence: tuple[str, int] | None = None, keep: Callable[[str], str | None] | None = None) -> str:
    """Chunk text as it is embedded, so the model's 256 tokens go to words (#11): of each fence, its opening line
    without attribute braces, its first CODE_LINES_EMBEDDED lines and its closing line; outside fences, heading lines
    without their anchors (strip_heading_anchors), links and images with their words but not their targets, and no
    markup that carries no words (_words_of_line), with runs of blank lines cut to one. `fence` is the one open
    where the text starts (Chunk.open_fence); `keep` says what other lines outside fences keep of their words (None:
    none; MDX's code lines and JSX tags, readable_mdx)."""
    out: list[str] = []
    code_lines = 0
    for line in _lines_read(text, fence):
        if fence is not None:
            if fence[0] in line and _closes_fence(line, fence):
                fence = None
                out.append(line)
            elif code_lines < CODE_LINES_EMBEDDED:
                out.append(line)
                code_lines += 1
            continue
        if _MARKER.match(line) is not None:
            heading = _ATX_HEADING.match(line)
            if heading is None:
                fence = _opens_fence(line)
            if fence is not None:
                code_lines = 0
                out.append(_FENCE_ATTRIBUTES.sub("", line) if "{" in line else line)
                continue
            if heading is not None:
                line = line[: heading.end()] + strip_heading_anchors(line[heading.end() :])
        elif keep is not None:
            kept = keep(line)
            if kept is None:
                continue
            line = kept
        words = _words_of_line(line)
        if words is None or (not words.strip() and out and not out[-1].strip()):
            continue
        out.append(words)
    return "\n".join(out)


def _lines_read(text: str, fence: tuple[str, int] | None) -> list[str]:
    """A chunk's lines as _readable reads them: a setext heading's underline, which carries no words, left out."""
    lines = text.split("\n")
    if fence is None and _setext_heading(text):
        del lines[1]
    return lines


def _words_of_line(line: str) -> str | None:
    """A line outside fences as it is embedded: links and reference links keep their words, formatting HTML tags and
    comments go, block markers keep their words; None for a line of markup alone (a table rule, a closing `///`)."""
    if "](" in line:
        line = _LINK.sub(r"\1", line)
    if "][" in line:
        line = _REFERENCE_LINK.sub(r"\1", line)
    if "<" in line:
        line = _HTML_TAG.sub("", line)
        line = _HEADING_NOISE.sub("", line) if "<!--" in line else line
    if "-" in line and "|" in line and _TABLE_RULE.fullmatch(line):
        return None
    marker = _BLOCK_MARKER.fullmatch(line) if line.lstrip(" \t")[:1] in ("!", "?", "/") else None
    if marker is not None:
        indent, kind, title = marker.groups()
        words = " ".join(word for word in (kind.replace("-", " "), title.strip().strip('"')) if word)
        return indent + words if words else None
    return line


def _push_heading(trail: list[tuple[int, str]], level: int, title: str) -> None:
    """A heading replaces every open heading at its level or deeper; one that says its parent's words again opens no
    level of its own (a page titled "Install Crossplane" in its front matter whose first heading is `## Install
    Crossplane`: its sections read "Install Crossplane > Step 1", not "Install Crossplane > Install Crossplane >
    Step 1")."""
    while trail and trail[-1][0] >= level:
        trail.pop()
    if trail and title and trail[-1][1].casefold() == title.casefold():
        return
    trail.append((level, title))


def _opens_fence(line: str) -> tuple[str, int] | None:
    match = _FENCE_OPEN.fullmatch(line)
    if match is None:
        return None
    run = match.group(1)
    if run[0] == "`" and "`" in match.group(2):  # CommonMark: a backtick fence's info string has no backtick
        return None
    return run[0], len(run)


def _closes_fence(line: str, fence: tuple[str, int]) -> bool:
    match = _FENCE_CLOSE.fullmatch(line)
    if match is None:
        return False
    run = match.group(1)
    return run[0] == fence[0] and len(run) >= fence[1]


def _is_blank(line: str) -> bool:
    return not line.strip(" \t")


def _utf8_pieces(line: str, limit: int) -> Iterator[str]:
    """Cut a line into pieces of at most limit UTF-8 bytes, each ending on a character boundary."""
    data = line.encode("utf-8")
    start = 0
    while start < len(data):
        end = min(start + limit, len(data))
        while end < len(data) and data[end] & 0xC0 == 0x80:  # a continuation byte: back up to the lead byte
            end -= 1
        yield data[start:end].decode("utf-8")
        start = end


def line_parts(line: str) -> list[str]:
    """The parts a line longer than HARD_LIMIT_BYTES is cut into, each a chunk of its own (R-C2), blank ones left
    out: part n of a long line is the n-th of these, as search hits number them and read_doc shows them (issue 34).
    [line] for a line that fits."""
    if len(line) * 4 <= HARD_LIMIT_BYTES or len(line.encode("utf-8")) <= HARD_LIMIT_BYTES:
        return [line]
    return [piece for piece in _utf8_pieces(line, HARD_LIMIT_BYTES) if not _is_blank(piece)]


class _ChunkBuilder:
    """Collects the lines of the current chunk and keeps its UTF-8 size without re-joining."""

    __slots__ = (
        "chunks",
        "closed",
        "heading",
        "_parts",
        "_size",
        "_pending_blanks",
        "_start",
        "_end",
        "_has_body",
        "_open_fence",
    )

    def __init__(self) -> None:
        self.chunks: list[Chunk] = []  # closed and not yet taken (iter_chunks takes them as they come)
        self.closed = 0  # chunks closed so far: the next one's ordinal
        self.heading = ""
        self._parts: list[str] = []
        self._size = 0  # UTF-8 bytes of "\n".join(self._parts); trailing blank lines are pending, not counted
        self._pending_blanks = 0
        self._start = 0
        self._end = 0
        self._has_body = False  # something other than the heading line
        self._open_fence: tuple[str, int] | None = None  # the fence open before the chunk's first line

    def text(self) -> str:
        """The current chunk's lines so far."""
        return "\n".join(self._parts)

    def add(
        self,
        line: str,
        line_no: int,
        *,
        in_fence: bool,
        is_heading: bool = False,
        inside: tuple[str, int] | None = None,
    ) -> None:
        """Add a source line; `inside` is the fence open before it (None outside fences and for an opening line)."""
        if _is_blank(line):
            if self._parts:
                if not in_fence and self._size >= SOFT_LIMIT_BYTES:
                    self.close()
                else:
                    self._pending_blanks += 1
            return
        size = len(line.encode("utf-8"))
        if size > HARD_LIMIT_BYTES:
            self._add_long_line(line, line_no, is_heading, inside)
            return
        added = size + self._pending_blanks + 1 if self._parts else size
        if self._size + added > HARD_LIMIT_BYTES:
            self.close()
            added = size
        if not self._parts:
            self._start = line_no
            self._open_fence = inside
        elif self._pending_blanks:
            self._parts.extend([""] * self._pending_blanks)
        self._parts.append(line)
        self._size += added
        self._pending_blanks = 0
        self._end = line_no
        self._has_body = self._has_body or not is_heading

    def close(self) -> None:
        """End the current chunk; one holding nothing but its heading line is dropped (R-C2)."""
        if self._parts and self._has_body:
            text = "\n".join(self._parts)
            self.chunks.append(Chunk(self.closed, self.heading, text, self._start, self._end, self._open_fence))
            self.closed += 1
        self._parts = []
        self._size = 0
        self._pending_blanks = 0
        self._has_body = False

    def _add_long_line(self, line: str, line_no: int, is_heading: bool, inside: tuple[str, int] | None) -> None:
        """A line over the hard cap becomes chunks of its own, one per piece (R-C2)."""
        self.close()
        for piece in line_parts(line):
            self._parts = [piece]
            self._open_fence = inside
            self._start = self._end = line_no
            self._has_body = not is_heading
            self.close()


# The pieces every format's chunker shares (scree.content.rst, asciidoc, plaintext): one builder, one cleaning, one
# way to walk lines and keep a heading trail.
ChunkBuilder = _ChunkBuilder
clean_text = _clean
lines_of = _lines
push_heading = _push_heading

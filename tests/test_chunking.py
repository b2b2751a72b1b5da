"""Chunking: examples of each rule (R-C1 to R-C4) and property tests over generated markdown (R-C5)."""

from __future__ import annotations

import hashlib
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scree.content.chunking import (
    CODE_LINES_EMBEDDED,
    HARD_LIMIT_BYTES,
    HEADING_CAP_BYTES,
    SOFT_LIMIT_BYTES,
    Chunk,
    below_heading,
    chunk_markdown,
    embed_text,
    normalise_newlines,
    opted_out,
    split_front_matter,
    strip_heading_anchors,
    text_hash,
    too_little_to_show,
)


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


# ---------------------------------------------------------------- examples


def test_heading_trail_nests_and_a_sibling_pops_it() -> None:
    text = "intro\n# A\na\n## B\nb\n### C\nc\n## D\nd\n# E\ne\n"
    chunks = chunk_markdown(text)
    assert [chunk.heading for chunk in chunks] == ["", "A", "A > B", "A > B > C", "A > D", "E"]
    assert [chunk.text for chunk in chunks] == ["intro", "# A\na", "## B\nb", "### C\nc", "## D\nd", "# E\ne"]
    ranges = [(chunk.start_line, chunk.end_line) for chunk in chunks]
    assert ranges == [(1, 1), (2, 3), (4, 5), (6, 7), (8, 9), (10, 11)]
    assert [chunk.ordinal for chunk in chunks] == [0, 1, 2, 3, 4, 5]


def test_skipped_levels_and_a_shallower_heading_pop_everything_deeper() -> None:
    chunks = chunk_markdown("# A\nx\n### C\ny\n## B\nz\n")
    assert [chunk.heading for chunk in chunks] == ["A", "A > C", "A > B"]


def test_heading_syntax_follows_commonmark_atx() -> None:
    text = "## Title ##\nbody\n#\tTabbed\nbody\n   # Three spaces #  \nbody\n# foo#\nbody\n"
    assert [chunk.heading for chunk in chunk_markdown(text)] == ["Title", "Tabbed", "Three spaces", "foo#"]
    not_headings = "#hashtag\n    # indented code\n####### seven\n\\# escaped\n"
    chunks = chunk_markdown(not_headings)
    assert len(chunks) == 1
    assert chunks[0].heading == ""
    assert chunks[0].text == not_headings.rstrip("\n")


def test_hash_inside_a_fence_is_text_not_a_heading() -> None:
    text = "# Real\n```bash\n# a shell comment\n## another\n```\n# Next\nafter\n"
    chunks = chunk_markdown(text)
    assert [chunk.heading for chunk in chunks] == ["Real", "Next"]
    assert chunks[0].text == "# Real\n```bash\n# a shell comment\n## another\n```"
    assert (chunks[0].start_line, chunks[0].end_line) == (1, 5)


def test_a_fence_closes_only_on_the_same_character_at_least_as_long() -> None:
    text = "# A\n````\n```\n~~~\n# inside\n````\n# B\nb\n"
    assert [chunk.heading for chunk in chunk_markdown(text)] == ["A", "B"]
    tilde = "# A\n~~~\n```\n# inside\n~~~\n# B\nb\n"
    assert [chunk.heading for chunk in chunk_markdown(tilde)] == ["A", "B"]


def test_an_unclosed_fence_runs_to_the_end_of_the_file() -> None:
    chunks = chunk_markdown("# A\n```\n# not a heading\n\n# nor this\n")
    assert len(chunks) == 1
    assert chunks[0].heading == "A"
    assert chunks[0].text == "# A\n```\n# not a heading\n\n# nor this"


def test_a_backtick_fence_info_string_with_a_backtick_is_not_a_fence() -> None:
    chunks = chunk_markdown("# A\n``` not `a fence\n# B\nb\n")
    assert [chunk.heading for chunk in chunks] == ["A", "B"]


def test_heading_only_chunks_are_dropped() -> None:
    chunks = chunk_markdown("# Title\n\n## Empty section\n   \n## Full\ntext\n# Last\n")
    assert len(chunks) == 1
    assert chunks[0].heading == "Title > Full"
    assert chunks[0].text == "## Full\ntext"
    assert (chunks[0].start_line, chunks[0].end_line) == (5, 6)
    assert chunks[0].ordinal == 0


def test_front_matter_is_skipped_and_lines_keep_the_file_numbering() -> None:
    text = "---\ntitle: Guide\ntags: [a]\n---\n\n# Install\nrun it\n"
    chunks = chunk_markdown(text)
    assert len(chunks) == 1
    assert chunks[0].text == "# Install\nrun it"
    assert (chunks[0].start_line, chunks[0].end_line) == (6, 7)
    assert split_front_matter(text) == ("title: Guide\ntags: [a]", "\n# Install\nrun it\n", 4)


def test_front_matter_may_close_with_dots_and_may_be_empty() -> None:
    assert split_front_matter("---\na: 1\n...\nbody") == ("a: 1", "body", 3)
    assert split_front_matter("---\n---\nbody") == ("", "body", 2)
    assert split_front_matter("---\na: 1\n---") == ("a: 1", "", 3)


def test_unclosed_or_late_front_matter_is_ordinary_text() -> None:
    assert split_front_matter("---\ntitle: x\nbody\n") == (None, "---\ntitle: x\nbody\n", 0)
    assert split_front_matter("---") == (None, "---", 0)
    assert split_front_matter("\n---\na\n---\n") == (None, "\n---\na\n---\n", 0)
    chunks = chunk_markdown("---\ntitle: x\n# H\nbody\n")
    assert [(chunk.text, chunk.start_line) for chunk in chunks] == [("---\ntitle: x", 1), ("# H\nbody", 3)]


def test_opt_out_in_front_matter() -> None:
    assert opted_out("---\nscree: ignore\n---\n# Doc\n")
    assert opted_out('---\ntitle: x\nscree: "ignore"\n---\n')
    assert opted_out("---\nscree: 'ignore'  # private notes\n...\n")
    assert opted_out("\ufeff---\r\nscree:ignore\r\n---\r\nbody")


def test_no_opt_out_without_a_top_level_scree_ignore_in_front_matter() -> None:
    assert not opted_out("# Doc\nscree: ignore\n")
    assert not opted_out("---\nscree: ignore\n")  # never closed: not front matter
    assert not opted_out("---\nscree: keep\n---\n")
    assert not opted_out("---\nother:\n  scree: ignore\n---\n")
    assert not opted_out("---\nscree: ignored\n---\n")
    assert not opted_out("---\ntitle: x\n---\nscree: ignore\n")
    assert not opted_out("")


def test_crlf_and_lone_cr_count_lines_like_lf() -> None:
    lf = chunk_markdown("intro\n\n# H\nbody\n\n\nmore\n")
    crlf = chunk_markdown("intro\r\n\r\n# H\r\nbody\r\n\r\n\r\nmore\r\n")
    cr = chunk_markdown("intro\r\r# H\rbody\r\r\rmore\r")
    assert lf == crlf == cr
    assert [(chunk.start_line, chunk.end_line) for chunk in lf] == [(1, 1), (3, 7)]
    assert lf[1].text == "# H\nbody\n\n\nmore"
    assert normalise_newlines("a\r\nb\rc\n\r\n") == "a\nb\nc\n\n"


def test_unicode_line_separators_are_not_newlines() -> None:
    chunks = chunk_markdown("a\u2028b\x85c\x0cd\n# H\nx")
    assert chunks[0].text == "a\u2028b\x85c\x0cd"
    assert (chunks[1].start_line, chunks[1].end_line) == (2, 3)


def test_a_10_kb_line_is_cut_on_character_boundaries_into_chunks_of_its_own() -> None:
    line = "é🚀検" * 1111  # 9 bytes a round: 9,999 bytes, cut points fall inside characters
    chunks = chunk_markdown(f"# Long\nbefore\n{line}\nafter\n")
    assert [chunk.text for chunk in chunks][0] == "# Long\nbefore"
    pieces = chunks[1:-1]
    assert len(pieces) == 3
    assert all(utf8_len(piece.text) <= HARD_LIMIT_BYTES for piece in pieces)
    assert all(utf8_len(piece.text) > HARD_LIMIT_BYTES - 4 for piece in pieces[:-1])
    assert "".join(piece.text for piece in pieces) == line
    assert all((piece.start_line, piece.end_line) == (3, 3) for piece in pieces)
    assert all(piece.heading == "Long" for piece in chunks)
    assert (chunks[-1].text, chunks[-1].start_line) == ("after", 4)


def test_chunks_close_at_a_blank_line_once_past_the_soft_limit() -> None:
    paragraph = "w" * 999
    chunks = chunk_markdown("\n\n".join([paragraph] * 6))
    # 999 + 2 + 999 = 2000 < 2500 keeps going; the third paragraph makes 3001, closed at the next blank line.
    assert [chunk.text.count("w") for chunk in chunks] == [2997, 2997]
    assert [(chunk.start_line, chunk.end_line) for chunk in chunks] == [(1, 5), (7, 11)]


def test_the_hard_limit_cuts_even_inside_a_fence() -> None:
    code = "\n".join(f"    value_{index:04d} = compute({index})  # step" for index in range(300))
    chunks = chunk_markdown(f"# Code\n```python\n{code}\n```\n")
    assert len(chunks) > 3
    assert all(SOFT_LIMIT_BYTES < utf8_len(chunk.text) <= HARD_LIMIT_BYTES for chunk in chunks[:-1])
    assert all(chunk.heading == "Code" for chunk in chunks)
    assert all(chunks[i].end_line + 1 == chunks[i + 1].start_line for i in range(len(chunks) - 1))


def test_a_chunk_closes_at_a_blank_line_from_exactly_the_soft_limit() -> None:
    assert [chunk.text for chunk in chunk_markdown("a" * 2500 + "\n\nb")] == ["a" * 2500, "b"]
    assert [chunk.text for chunk in chunk_markdown("a" * 2499 + "\n\nb")] == ["a" * 2499 + "\n\nb"]


def test_a_chunk_holds_exactly_the_hard_limit_counting_blank_lines() -> None:
    full = "```" + ("\n\n" + "a" * 98) * 34 + "\n\n" + "c" * 95  # blank lines inside a fence: no soft close
    assert utf8_len(full) == HARD_LIMIT_BYTES
    assert [chunk.text for chunk in chunk_markdown(full + "\nb")] == [full, "b"]
    over = full + "c"
    head, last = over.rsplit("\n\n", 1)
    assert [chunk.text for chunk in chunk_markdown(over + "\nb")] == [head, last + "\nb"]


def test_a_blank_line_inside_a_fence_does_not_close_a_chunk() -> None:
    filler = "\n".join(["x" * 99] * 26)  # 2,599 bytes: past the soft limit
    chunks = chunk_markdown(f"{filler}\n```\ncode\n\nmore code\n```\n\ntail\n")
    assert chunks[0].text.endswith("```\ncode\n\nmore code\n```")
    assert chunks[1].text == "tail"


def test_the_heading_line_counts_against_the_hard_limit() -> None:
    heading = "# " + "h" * 1998
    body = "b" * 1500  # 2000 + 1 + 1500 = 3501: one byte over
    chunks = chunk_markdown(f"{heading}\n{body}\n")
    assert [(chunk.text, chunk.start_line) for chunk in chunks] == [(body, 2)]
    assert chunks[0].heading == "h" * HEADING_CAP_BYTES


def test_each_heading_is_capped_at_120_bytes_on_a_character_boundary() -> None:
    chunks = chunk_markdown("# " + "a" + "🚀" * 50 + "\n## " + "é" * 100 + "\nbody\n")
    first, second = chunks[0].heading.split(" > ")
    assert first == "a" + "🚀" * 29  # 117 bytes; a 30th emoji would make 121
    assert second == "é" * 60
    assert all(utf8_len(part) <= HEADING_CAP_BYTES for part in (first, second))


def test_a_byte_order_mark_does_not_hide_front_matter_or_a_heading() -> None:
    assert chunk_markdown("\ufeff# Title\nbody")[0].heading == "Title"
    chunks = chunk_markdown("\ufeff---\na: 1\n---\nbody")
    assert [(chunk.text, chunk.start_line) for chunk in chunks] == [("body", 4)]


def test_lone_surrogates_become_valid_utf8() -> None:
    chunks = chunk_markdown("# Ti\udc80tle\nbo\ud800dy\n")
    for chunk in chunks:
        chunk.text.encode("utf-8")
        chunk.heading.encode("utf-8")
    assert chunks[0].text == "# Ti?tle\nbo?dy"


def test_empty_and_blank_documents_have_no_chunks() -> None:
    assert chunk_markdown("") == []
    assert chunk_markdown("\n \n\t\r\n") == []
    assert chunk_markdown("---\ntitle: only front matter\n---\n") == []


def test_embed_text_and_its_cache_key() -> None:
    chunk = Chunk(ordinal=0, heading="API > Auth", text="Use a token.", start_line=3, end_line=3)
    embedded = embed_text("docs/api.md", chunk)
    assert embedded == "docs/api.md\nAPI > Auth\n\nUse a token."
    expected = hashlib.sha256(b"remote:model:512\0docs/api.md\nAPI > Auth\n\nUse a token.").hexdigest()
    assert text_hash("remote:model:512", embedded) == expected
    assert text_hash("remote:other:512", embedded) != expected
    assert len(text_hash("m", "bad\udcffname.md")) == 64  # a file name from undecodable bytes still hashes


# Heading forms as real docs trees write them (#11): the anchors go from the trail and the embedded text, never from
# the chunk text a hit shows (read_doc and hits show the file as it is).
ANCHORED_HEADINGS = [
    ("Request body { #request-body }", "Request body"),  # MkDocs attr_list (FastAPI)
    ("Request body {: #request-body }", "Request body"),  # kramdown
    ("Usage {/*usage*/}", "Usage"),  # MDX comment (React docs)
    ("Options {#opts .unnumbered lang=en}", "Options"),  # Pandoc attributes
    ("Class not fully defined {#class-not-fully-defined}", "Class not fully defined"),  # pydantic, Docusaurus
    ('Quoted {#q data-x="a b"}', "Quoted"),
    ("Style {.note}", "Style"),
    ('Implementing `__get_pydantic_core_schema__` <a name="impl"></a>', "Implementing `__get_pydantic_core_schema__`"),
    ('<a id="top"></a> Top', "Top"),
    ("Intro <!-- keep short -->", "Intro"),
    # HTML around a heading's words (OpenTelemetry's README: the logo's <img> had been the docs map's title)
    ('<img src="https://x.io/logo.png" alt="OTel logo" width="45"> OpenTelemetry.io', "OpenTelemetry.io"),
    ('`borderCurve` <div className="label ios">iOS</div>', "`borderCurve` iOS"),  # React Native
    ('<span style="color:red"> 1. From the repository </span>', "1. From the repository"),  # Vitess
    ('Astro <picture><source media="(prefers-color-scheme: dark)" srcset="a.png"><img src="b.png"></picture>', "Astro"),
    ('Title <Badge text="beta" />', "Title"),
    ("Why <b>bold</b>", "Why bold"),
    ("Break<br/>here", "Break here"),
]
UNTOUCHED_HEADINGS = [
    "Use {} here",
    "A dict {x: 1}",
    "Set {a, b}",
    "Sets {#}",
    "# {}",
    "C# {x}",
    "`<input bind:value>`",  # code spans keep their tags (Svelte)
    "Flags --prefix <prefix>",  # placeholders and generics are no HTML
    "Array<T> and Promise<void>",
    "<Version>1.2</Version>",
]


def test_heading_anchors_are_stripped_from_real_heading_forms() -> None:
    for written, words in ANCHORED_HEADINGS:
        assert strip_heading_anchors(written) == words, written
    for written in UNTOUCHED_HEADINGS:
        assert strip_heading_anchors(written) == written


def test_the_trail_and_the_embedded_text_lose_anchors_and_the_chunk_text_keeps_them() -> None:
    text = "# Tutorial { #tutorial }\n\n## Request body {/*body*/}\n\nSend JSON.\n\n```md\n## In a fence { #kept }\n```"
    chunks = chunk_markdown(text)
    assert [chunk.heading for chunk in chunks] == ["Tutorial > Request body"]
    assert chunks[0].text.startswith("## Request body {/*body*/}")
    embedded = embed_text("docs/t.md", chunks[0])
    assert embedded.startswith("docs/t.md\nTutorial > Request body\n\n## Request body\n\nSend JSON.")
    assert "## In a fence { #kept }" in embedded  # a fence is code: left as written
    only_anchor = chunk_markdown("# {#id}\nbody\n")
    assert only_anchor[0].heading == ""


def test_the_embedded_text_keeps_a_links_words_not_its_target() -> None:
    chunk = chunk_markdown(
        '# Tools\n\nSee [the guide](../guide.md#setup), ![logo](img/a.png "Logo") and [`uv run`](./run.md).\n'
        "\n```md\n[kept](in/a/fence.md)\n```\n"
    )[0]
    assert "[the guide](../guide.md#setup)" in chunk.text  # hits show the file as it is
    assert embed_text("t.md", chunk) == (
        "t.md\nTools\n\n# Tools\n\nSee the guide, logo and `uv run`.\n\n```md\n[kept](in/a/fence.md)\n```"
    )


def test_a_fence_is_embedded_as_its_info_string_and_first_lines_and_the_chunk_keeps_all_of_it() -> None:
    body = [f"line_{n} = {n}" for n in range(1, 12)]
    fence = '```python {test="skip" lint="skip"}\n' + "\n".join(body) + "\n```"
    text = f"# Config\n\nSet it:\n\n{fence}\n\nThen run it.\n"
    chunk = chunk_markdown(text)[0]
    assert "line_11 = 11" in chunk.text and '{test="skip" lint="skip"}' in chunk.text  # hits and keywords see it all
    kept = "\n".join(body[:CODE_LINES_EMBEDDED])
    assert embed_text("c.md", chunk) == f"c.md\nConfig\n\n# Config\n\nSet it:\n\n```python\n{kept}\n```\n\nThen run it."
    short = chunk_markdown('# T\n\n~~~~toml title="pyproject.toml"\n[project]\nname = "x"\n~~~~\n')[0]
    assert embed_text("t.md", short).endswith('~~~~toml title="pyproject.toml"\n[project]\nname = "x"\n~~~~')


def test_a_fence_left_open_at_the_chunks_end_is_still_cut_and_a_longer_run_closes_it() -> None:
    lines = "\n".join(f"x{n}" for n in range(CODE_LINES_EMBEDDED + 3))
    unclosed = Chunk(0, "T", f"````\n{lines}\n```\nstill code", 1, 2)
    assert embed_text("t.md", unclosed) == "t.md\nT\n\n````\n" + "\n".join(lines.split("\n")[:CODE_LINES_EMBEDDED])
    closed = Chunk(0, "T", "```\na\n`````\nProse after.", 1, 4)
    assert embed_text("t.md", closed) == "t.md\nT\n\n```\na\n`````\nProse after."


def test_a_chunk_cut_mid_fence_embeds_its_first_lines_as_code_and_the_prose_after_the_fence_in_full() -> None:
    code = [f"value_{n:04d} = {n}  # a line of code" for n in range(120)]  # over the hard cap: cut mid-fence
    prose = [f"Prose line {n} after the code." for n in range(CODE_LINES_EMBEDDED + 2)]
    chunks = chunk_markdown("# T\n\n~~~~python\n" + "\n".join(code) + "\n~~~~\n" + "\n".join(prose) + "\n")
    assert len(chunks) == 2 and chunks[0].open_fence is None
    cut = chunks[1]
    assert cut.open_fence == ("~", 4) and cut.text.endswith("~~~~\n" + "\n".join(prose))
    first_code = cut.text.split("\n")[:CODE_LINES_EMBEDDED]
    assert first_code[0].startswith("value_") and len(cut.text.split("\n")) > CODE_LINES_EMBEDDED + len(prose) + 1
    assert embed_text("t.md", cut) == "t.md\nT\n\n" + "\n".join([*first_code, "~~~~", *prose])
    piece = chunk_markdown("```\n" + "y" * (HARD_LIMIT_BYTES + 10) + "\n```\n")  # a long code line's pieces
    assert [chunk.open_fence for chunk in piece] == [None, ("`", 3), ("`", 3), ("`", 3)]  # the closing line too


# Markup of real docs trees that costs tokens and carries no words (#11): what each line is embedded as.
MARKUP_LINES = [
    ("See [`int`][] and [the guide][guide-ref].", "See `int` and the guide."),  # reference links (pydantic)
    ("[`pydantic.types.Strict`][pydantic.types.Strict]<br>", "`pydantic.types.Strict`"),
    ('<div class="grid cards" markdown>', ""),
    ('<p align="center"><img src="logo.png" alt="logo"/></p>', ""),
    ("Press <kbd>Ctrl</kbd>+<kbd>C</kbd>. <!-- prettier-ignore -->", "Press Ctrl+C. "),
    ('!!! tip "Learn more"', "tip Learn more"),
    ('    ??? example "Example - Strict mode"', "    example Example - Strict mode"),
    ('???+ note "Open"', "note Open"),
    ("/// version-added | v2.13", "version added v2.13"),
]
KEPT_LINES = [
    "Replace <version> with the release and <name> with yours.",  # placeholders are words, not tags
    "| a | b |",
    "Use x -> y or a || b, and 3/4 of // comments.",
    "What? !important",
]


def test_markup_that_carries_no_words_is_left_out_of_the_embedded_text() -> None:
    for written, words in MARKUP_LINES:
        chunk = Chunk(0, "T", f"Intro.\n{written}\nEnd.", 1, 3)
        expected = f"Intro.\n{words}\nEnd." if words else "Intro.\n\nEnd."
        assert embed_text("t.md", chunk) == f"t.md\nT\n\n{expected}", written
    for written in KEPT_LINES:
        assert embed_text("t.md", Chunk(0, "T", written, 1, 1)) == f"t.md\nT\n\n{written}", written


def test_table_rules_closing_markers_and_extra_blank_lines_go_and_the_chunk_text_keeps_them() -> None:
    text = "# T\n\n| Field | Type |\n|:------|----:|\n| `f1` | int |\n\n/// note\nSaid.\n///\n\n\n\nAfter."
    chunk = chunk_markdown(text)[0]
    assert chunk.text == text
    assert embed_text("t.md", chunk) == "t.md\nT\n\n# T\n\n| Field | Type |\n| `f1` | int |\n\nnote\nSaid.\n\nAfter."
    fenced = chunk_markdown("# T\n\n```md\n| a |\n|---|\n!!! tip\n\n\n[x][y]\n```\n")[0]
    assert embed_text("t.md", fenced) == "t.md\nT\n\n# T\n\n```md\n| a |\n|---|\n!!! tip\n\n\n```"  # code as written


def test_markup_alone_or_a_few_characters_is_too_little_to_show() -> None:
    for text in ("///", "## Tip\n\n///", "---\n***", "## Notes\n\nTBD", "!!! note"):
        assert too_little_to_show(text), text
    for text in ("```console\n$ uv sync --locked\n```", "## Sync\n\nRun uv sync to update it.", "検索はここで行います"):
        assert not too_little_to_show(text), text


# ---------------------------------------------------------------- properties (R-C5)

_ALPHABET = st.sampled_from(
    ["a", "z", "0", " ", " ", "\t", "#", "`", "~", "-", "é", "検", "索", "🚀", "👩", "\u200d", "\u2028"]
)
_WORDS = st.text(_ALPHABET, min_size=1, max_size=60)
_HEADING = st.builds(
    lambda indent, level, title, closing: " " * indent + "#" * level + " " + title + closing,
    st.integers(0, 4),
    st.integers(1, 7),
    _WORDS,
    st.sampled_from(["", " ##", "#"]),
)
_PROSE = st.builds(lambda word, times: word * times, _WORDS, st.integers(1, 40))
_LONG = st.builds(
    lambda piece, times: piece * times, st.sampled_from(["a", "é", "検", "🚀", "ab 🚀 ", " "]), st.integers(900, 4000)
)
_FENCE = st.sampled_from(["```", "````", "~~~", "~~~~", "```python", "  ```", "```x`", "    ```"])
_BLANK = st.sampled_from(["", "", "  ", "\t"])
_OTHER = st.sampled_from(["---", "...", "#", "#hashtag", "scree: ignore"])
_LINE = st.one_of(_PROSE, _PROSE, _BLANK, _BLANK, _HEADING, _FENCE, _LONG, _OTHER)
_FRONT_MATTER = st.sampled_from(
    ["", "---\ntitle: t\n---\n", "---\nscree: ignore\n...\n", "---\nunclosed: yes\n"]
    + ['+++\ntitle = "t"\n+++\n', "+++\na = 1\n"]
)
_NEWLINE = st.sampled_from(["\n", "\n", "\r\n", "\r"])


@st.composite
def markdown_documents(draw: st.DrawFn) -> str:
    lines = draw(st.lists(st.tuples(_LINE, _NEWLINE), max_size=80))
    body = "".join(line + newline for line, newline in lines)
    if draw(st.booleans()) and body:
        body = body.rstrip("\r\n")  # no final newline
    return draw(_FRONT_MATTER).replace("\n", draw(_NEWLINE)) + body


_SHORT_LINE = st.builds(
    lambda piece, times: piece * times, st.sampled_from(["", "x", " x", "é", "検", "🚀"]), st.integers(0, 40)
)


@st.composite
def dense_documents(draw: st.DrawFn) -> str:
    """Many short lines and blank runs, often in a fence, so chunks end within a few bytes of each limit."""
    lines = draw(st.lists(_SHORT_LINE, min_size=120, max_size=400))
    fence = draw(st.sampled_from(["", "```", "~~~"]))
    return "\n".join([fence, *lines, fence if draw(st.booleans()) else "tail"])


DOCUMENTS = st.one_of(markdown_documents(), dense_documents())


def source_lines(text: str) -> list[str]:
    """The file's lines, split independently of the code under test."""
    return re.split(r"\r\n|\r|\n", text)


def front_matter_lines(lines: list[str]) -> int:
    if len(lines) < 2 or lines[0] not in ("---", "+++"):
        return 0
    for index in range(1, len(lines)):
        if lines[index] in (("---", "...") if lines[0] == "---" else ("+++",)):
            return index + 1
    return 0


def is_blank(line: str) -> bool:
    return line.strip(" \t") == ""


UNDERLINE = re.compile(r" {0,3}(?:=+|-+)[ \t]*")  # a setext heading's, more loosely than the chunker reads it


def looks_like_heading(lines: list[str], number: int) -> bool:
    """Whether line `number` (from 1) may be a heading's: an ATX heading, or a line of text over an underline, or
    the underline under such a line."""
    line = lines[number - 1]
    if re.match(r" {0,3}#{1,6}(?:[ \t]|$)", line) is not None:
        return True
    if not is_blank(line) and number < len(lines) and UNDERLINE.fullmatch(lines[number]):
        return True
    return UNDERLINE.fullmatch(line) is not None and number > 1 and not is_blank(lines[number - 2])


def dropped_heading_is_alone(lines: list[str], number: int) -> bool:
    """A dropped heading (its underline too) is followed by blanks then another heading or the end, or is too big to
    share a chunk."""
    heading = utf8_len(lines[number - 1])
    if number < len(lines) and UNDERLINE.fullmatch(lines[number]) and not is_blank(lines[number - 1]):
        number += 1  # a setext heading: its underline is dropped with it
        heading += 1 + utf8_len(lines[number - 1])
    blanks = 0
    for after in range(number + 1, len(lines) + 1):
        line = lines[after - 1]
        if is_blank(line):
            blanks += 1
            continue
        return looks_like_heading(lines, after) or heading + blanks + 1 + utf8_len(line) > HARD_LIMIT_BYTES
    return True


def check_valid_and_within_caps(lines: list[str], chunks: list[Chunk]) -> None:
    assert [chunk.ordinal for chunk in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert 0 < utf8_len(chunk.text) <= HARD_LIMIT_BYTES  # utf8_len raises on a lone surrogate
        assert not is_blank(chunk.text)
        assert all(utf8_len(part) <= HEADING_CAP_BYTES for part in chunk.heading.split(" > "))
        assert not is_blank(lines[chunk.start_line - 1]) and not is_blank(lines[chunk.end_line - 1])


def check_each_line_in_exactly_one_chunk(lines: list[str], chunks: list[Chunk]) -> None:
    skipped = front_matter_lines(lines)
    long_lines = {number for number, line in enumerate(lines, 1) if utf8_len(line) > HARD_LIMIT_BYTES}
    for before, after in zip(chunks, chunks[1:], strict=False):
        assert before.start_line <= before.end_line
        shared_long_line = before.end_line == after.start_line == after.end_line and after.start_line in long_lines
        assert before.end_line < after.start_line or shared_long_line
    covering: dict[int, int] = {}
    for chunk in chunks:
        assert chunk.start_line > skipped
        for number in range(chunk.start_line, chunk.end_line + 1):
            covering[number] = covering.get(number, 0) + 1
    for number, line in enumerate(lines, 1):
        if number <= skipped or is_blank(line):
            continue
        if number in long_lines and covering.get(number, 0) > 1:
            continue  # pieces of one long line, each a chunk of its own
        if covering.get(number, 0) == 0:
            assert looks_like_heading(lines, number), f"line {number} is in no chunk: {line!r}"
            assert dropped_heading_is_alone(lines, number)
            continue
        assert covering[number] == 1


def check_texts_reproduce_the_source(lines: list[str], chunks: list[Chunk]) -> None:
    by_long_line: dict[int, list[str]] = {}
    for chunk in chunks:
        if chunk.start_line == chunk.end_line and utf8_len(lines[chunk.start_line - 1]) > HARD_LIMIT_BYTES:
            by_long_line.setdefault(chunk.start_line, []).append(chunk.text)
            continue
        source = lines[chunk.start_line - 1 : chunk.end_line]
        assert chunk.text == "\n".join("" if is_blank(line) else line for line in source)
    for number, pieces in by_long_line.items():
        # Only pieces holding nothing but spaces and tabs are left out.
        assert re.sub(r"[ \t]", "", "".join(pieces)) == re.sub(r"[ \t]", "", lines[number - 1])


def check_chunks_close_only_at_a_limit(lines: list[str], chunks: list[Chunk]) -> None:
    for before, after in zip(chunks, chunks[1:], strict=False):
        gap = lines[before.end_line : after.start_line - 1]
        first = lines[after.start_line - 1]
        if not all(is_blank(line) for line in gap) or looks_like_heading(lines, after.start_line):
            continue  # a new section or a dropped heading lies between
        if HARD_LIMIT_BYTES < max(utf8_len(lines[before.end_line - 1]), utf8_len(first)):
            continue  # pieces of a long line stand alone
        size = utf8_len(before.text)
        hard_close = size + len(gap) + 1 + utf8_len(first) > HARD_LIMIT_BYTES
        assert hard_close or (gap and size >= SOFT_LIMIT_BYTES)


# One generated document runs every check: generating it costs more than chunking it.
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENTS)
def test_chunking_properties(text: str) -> None:
    chunks = chunk_markdown(text)
    assert chunk_markdown(text) == chunks  # deterministic
    lines = source_lines(text)
    check_valid_and_within_caps(lines, chunks)
    check_each_line_in_exactly_one_chunk(lines, chunks)
    check_texts_reproduce_the_source(lines, chunks)
    check_chunks_close_only_at_a_limit(lines, chunks)
    unix = "\n".join(lines)
    assert chunk_markdown(unix) == chunks == chunk_markdown(unix.replace("\n", "\r\n"))


def test_a_front_matter_title_over_text_stays_above_the_page_s_h1s() -> None:
    """Tokio's "Spawning" (Zola; Hugo pages do the same): a paragraph under the front matter's title, then `# Accepting
    sockets` and `# Concurrency` as sections. Their trails had lost the page's title ("Concurrency > Tasks"); an H1
    after words a reader sees is a section of the titled page, unless it says the title again."""
    page = (
        "---\ntitle: Spawning\n---\n\nWe start the server.\n\n# Accepting sockets\n\nBind.\n\n"
        "# Concurrency\n\nMany.\n\n## Tasks\n\nA task.\n"
    )
    assert [chunk.heading for chunk in chunk_markdown(page)] == [
        "Spawning",
        "Spawning > Accepting sockets",
        "Spawning > Concurrency",
        "Spawning > Concurrency > Tasks",
    ]
    setext = "---\ntitle: Spawning\n---\nWe start.\n\nConcurrency\n===\n\nText.\n"
    assert [chunk.heading for chunk in chunk_markdown(setext)] == ["Spawning", "Spawning > Concurrency"]
    # what a reader does not see is no text above the H1: a licence comment, a script block, `&nbsp;`, imports
    for hidden in (
        "<!--\nLicensed to the ASF\n-->",
        "<script setup>\nconst a = b\n</script>",
        "&nbsp;",
        "import X from 'x';",
    ):
        chunks = chunk_markdown(f"---\ntitle: Cron\n---\n{hidden}\n\n# Cron scaler\n\nSpec.\n\n## Trigger\n\nT.\n")
        assert [chunk.heading for chunk in chunks][-2:] == ["Cron scaler", "Cron scaler > Trigger"], hidden
    # an H1 saying the title again after a tagline replaces it (Redux Toolkit's `# Redux Toolkit Quick Start`)
    restated = "---\ntitle: Quick Start\n---\n\n*The official way.*\n\n# Redux Toolkit Quick Start\n\nInstall.\n"
    assert [chunk.heading for chunk in chunk_markdown(restated)] == ["Quick Start", "Redux Toolkit Quick Start"]


def test_a_front_matter_title_heads_the_text_before_the_first_heading() -> None:
    """Issue 25: Docusaurus pages have no H1 (the title is in front matter), so their opening text had no heading
    and their sections no page name; the title heads the trail as an H1 would, and a real H1 replaces it."""
    front = '---\ntitle: "Upgrading \\"charts\\"" # shown as the H1\nid: upgrade\n---\n'
    page = front + "\nRun the upgrade.\n\n## Rollback\n\nRoll back.\n"
    chunks = chunk_markdown(page)
    assert [(chunk.heading, chunk.start_line) for chunk in chunks] == [
        ('Upgrading "charts"', 6),
        ('Upgrading "charts" > Rollback', 8),
    ]
    with_h1 = chunk_markdown("---\ntitle: Upgrading\n---\n# Upgrade guide\n\nRun it.\n")
    assert [chunk.heading for chunk in with_h1] == ["Upgrade guide"]
    nested = chunk_markdown("---\nsidebar:\n  title: Not the title\n---\n\nText.\n")
    assert [chunk.heading for chunk in nested] == [""]
    # a heading that says its parent's words again opens no level (Crossplane, Longhorn, Harbor, Vitess: a title in
    # front matter and a first `## ` heading of the same words)
    repeated = "---\ntitle: Install Crossplane\n---\n\n## Install Crossplane\n\nIntro.\n\n### Step 1\n\nRun.\n"
    assert [chunk.heading for chunk in chunk_markdown(repeated)] == [
        "Install Crossplane",
        "Install Crossplane > Step 1",
    ]
    # a link in a heading keeps its words, not its target (MikroORM's changelog, TiKV's "Deploy > [Install TiKV](…)")
    linked = "## [5.5.3](https://github.com/mikro-orm/mikro-orm/compare/v5.5.2...v5.5.3) (2022-11-10)\n\nFixes.\n"
    assert [chunk.heading for chunk in chunk_markdown(linked)] == ["5.5.3 (2022-11-10)"]
    assert [
        chunk.heading for chunk in chunk_markdown("# Deploy\n## [Install TiKV](../install/) ![x](i.png)\nRun.\n")
    ] == ["Deploy > Install TiKV x"]
    # Hugo's TOML front matter (KEDA's 2,155 pages): skipped as YAML's is, its title heads the page, a table's is not
    toml = '+++\ntitle = "Cron"\nmaintainer = "Community"\n[params]\ntitle = "Not it"\n+++\n\n### Trigger\n\nSpec.\n'
    assert [(chunk.heading, chunk.start_line) for chunk in chunk_markdown(toml)] == [("Cron > Trigger", 8)]
    assert split_front_matter("+++\na = 1\n---\nbody\n") == (None, "+++\na = 1\n---\nbody\n", 0)  # never closed
    assert opted_out('+++\ntitle = "x"\nscree = "ignore"\n+++\n')
    scalar = "---\ndescription: >\n  [Deprecated]\ntitle: Old API\n---\n\nText.\n"  # a block scalar's text is no table
    assert [chunk.heading for chunk in chunk_markdown(scalar)] == ["Old API"]
    # YAML lets the whole mapping be indented (Longhorn: 618 pages open `  title: Create a Snapshot`)
    indented = chunk_markdown("---\n  title: Create a Snapshot\n  weight: 1\n---\n\nA snapshot is a state.\n")
    assert [chunk.heading for chunk in indented] == ["Create a Snapshot"]
    deeper = chunk_markdown("---\n  weight: 1\n  sidebar:\n    title: Not the title\n---\n\nText.\n")
    assert [chunk.heading for chunk in deeper] == [""]
    assert opted_out("---\n  title: x\n  scree: ignore\n---\n") and not opted_out("---\na:\n  scree: ignore\n---\n")
    # a block scalar's title (Linkerd's posts: `title: |-` over the indented title) and a key in capitals (APISIX's
    # `Title: Router Radixtree`, as Hugo reads it)
    block = (
        "---\ndate: 2025\ntitle: |-\n  Announcing Linkerd 2.18: Battlescars,\n  lessons learned\nslug: x\n---\n\nHi.\n"
    )
    assert [chunk.heading for chunk in chunk_markdown(block)] == [
        "Announcing Linkerd 2.18: Battlescars, lessons learned"
    ]
    folded = "---\nseo:\n  title: >-\n    Not it\ntitle: >\n  Folded\n  title\n---\n\nText.\n"
    assert [chunk.heading for chunk in chunk_markdown(folded)] == ["Folded title"]
    assert [chunk.heading for chunk in chunk_markdown("---\nTitle: Router Radixtree\n---\n\nText.\n")] == [
        "Router Radixtree"
    ]
    # the Go website's JSON in an HTML comment (golang/website: 40 pages, no other title); not JSON, no title
    go = '<!--{\n  "Title": "Developing and publishing modules",\n  "Path": "/doc/modules"\n}-->\n\nYou can collect.\n'
    assert [(chunk.heading, chunk.start_line) for chunk in chunk_markdown(go)] == [
        ("Developing and publishing modules", 6)
    ]
    assert [chunk.heading for chunk in chunk_markdown('<!--{\n  "Title": [1]\n}-->\n\nText.\n')] == [""]
    assert [chunk.heading for chunk in chunk_markdown("<!--{\n  Title: oops\n}-->\n\nText.\n")] == [""]
    assert split_front_matter("<!--{\nTitle\n")[0] is None  # never closed


def test_a_setext_heading_heads_its_section_as_an_atx_heading_would() -> None:
    """requests' HISTORY.md heads each release with a line of dashes under it (CommonMark's setext heading): the
    whole file had been one run of chunks with no trail. A one-line paragraph over `===` is level 1, over `---`
    level 2; a list item, a line of a longer paragraph, indented code or a table over dashes is no heading."""
    text = (
        "Release History\n===============\n\n2.32.3 (2024-05-29)\n-------------------\n\n- Fixed a proxy bug.\n\n"
        "Install\n=======\n\nRun pip.\n\n- a list item\n---\n\nOne line\nand another\n---\n\n    code\n    ---\n\n"
        "| a |\n|---|\n"
    )
    chunks = chunk_markdown(text)
    assert [(chunk.heading, chunk.start_line) for chunk in chunks] == [
        ("Release History > 2.32.3 (2024-05-29)", 4),
        ("Install", 9),
    ]
    assert "- a list item\n---" in chunks[1].text and "| a |\n|---|" in chunks[1].text
    assert embed_text("HISTORY.md", chunks[0]).endswith("2.32.3 (2024-05-29)\n\n- Fixed a proxy bug.")  # no dashes
    assert below_heading(chunks[1].text).startswith("\nRun pip.")
    assert [chunk.heading for chunk in chunk_markdown("---\ntitle: Page\n---\n\nText.\n")] == ["Page"]


def test_an_html_comment_block_holds_no_headings() -> None:
    """APISIX's pages (and many Apache projects') open with the license in an HTML comment whose lines start with
    `#`: each was a heading ("Licensed to the Apache Software Foundation...") until the next `#` line. CommonMark
    reads the block as HTML to its closing `-->`; a chunk of the comment alone is never shown as a hit."""
    license_lines = "\n".join(("#", "# Licensed to the Apache Software Foundation (ASF) under one", "# limitations."))
    page = f"---\ntitle: Router\n---\n\n<!--\n{license_lines}\n-->\n\n### What is it?\n\nA radix tree.\n"
    chunks = chunk_markdown(page)
    assert [chunk.heading for chunk in chunks] == ["Router", "Router > What is it?"]
    assert too_little_to_show(chunks[0].text) and not too_little_to_show(chunks[1].text)
    inline = chunk_markdown("# Guide\n\n<!-- a note --> \n\n## Step\n\nRun it.\n")  # closed on its line
    assert [chunk.heading for chunk in inline] == ["Guide", "Guide > Step"]
    fenced = chunk_markdown("# Guide\n\n```html\n<!--\n```\n\n## Step\n\nRun it.\n")  # in a fence: code
    assert [chunk.heading for chunk in fenced][-1] == "Guide > Step"


@pytest.mark.timeout(20)
@pytest.mark.parametrize("run", ["{/*", "<!--", "\t", "{#a "], ids=["mdx-comment", "html-comment", "tabs", "attrs"])
def test_a_heading_line_of_300_kb_is_chunked_at_once(run: str) -> None:
    """The patterns that take anchors and closing hashes off a heading took time growing with the square of its
    length (`# {/*{/*...` of 300 kB: minutes, in the writer and in a read_doc); past HEADING_CLEANED_CHARS a heading
    keeps them. Real headings are cleaned as before."""
    doc = "# " + run * (300_000 // len(run)) + "!\n\nbody text\n"
    chunks = chunk_markdown(doc)
    assert chunks and chunks[-1].text.endswith("body text")
    assert all(utf8_len(chunk.heading) <= HEADING_CAP_BYTES for chunk in chunks)
    assert strip_heading_anchors("Usage {/*usage*/} { #usage }") == "Usage"
    assert chunk_markdown("## Install ##\n\ntext\n")[0].heading == "Install"

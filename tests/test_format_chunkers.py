"""Issue 33: reStructuredText, AsciiDoc and plain text chunked per construct, with exact source line ranges, and
`.txt` files read as rst, plain text or no docs at all by their content."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scree.content import asciidoc, plaintext, rst
from scree.content.chunking import HARD_LIMIT_BYTES, Chunk
from scree.content.formats import ASCIIDOC, RST, TEXT, DocFormat, NotDocs, detect, embedded_text, name_refusal


def line_of(doc: str, needle: str, nth: int = 1) -> int:
    """The 1-based number of the nth line of `doc` that contains `needle`."""
    found = [number for number, line in enumerate(doc.split("\n"), start=1) if needle in line]
    return found[nth - 1]


def embedded(row: DocFormat, chunk: Chunk) -> str:
    return embedded_text("doc", chunk, row).split("\n\n", 1)[1]


RST_DOC = """\
.. _guide:

============
Widget Guide
============

Widgets turn :func:`os.path.join` calls into paths; see :ref:`the setup notes <setup-notes>`
and `the website <https://example.com>`_ for ``more``.

.. |name| replace:: Widgetry

.. This comment is for the authors only: zanzibar.

Install
-------

.. code-block:: python
   :caption: install.py
   :linenos:

   import widgets
   widgets.install()

.. note::
   Installing needs a compiler.

   .. versionadded:: 2.0
      The ``--fast`` flag.

Linux
~~~~~

Run this::

    $ make widgets

.. toctree::
   :maxdepth: 2

   secret-page-name

.. automodule:: widgets.core
   :members:

Usage
-----

Call widgets from code.
"""


def test_rst_sections_follow_the_adornment_order_with_exact_line_ranges() -> None:
    chunks = list(rst.iter_chunks(RST_DOC))
    assert [chunk.heading for chunk in chunks] == [
        "",
        "Widget Guide",
        "Widget Guide > Install",
        "Widget Guide > Install > Linux",
        "Widget Guide > Usage",
    ]
    spans = [(chunk.start_line, chunk.end_line) for chunk in chunks]
    assert spans == [
        (1, 1),
        (line_of(RST_DOC, "============"), line_of(RST_DOC, "zanzibar")),
        (line_of(RST_DOC, "Install"), line_of(RST_DOC, "The ``--fast`` flag.")),
        (line_of(RST_DOC, "Linux"), line_of(RST_DOC, ":members:")),
        (line_of(RST_DOC, "Usage"), line_of(RST_DOC, "Call widgets")),
    ]
    assert chunks[1].text.startswith("============\nWidget Guide\n============\n")  # the lines as written


def test_rst_embedded_text_keeps_words_and_code_and_leaves_markup_out() -> None:
    chunks = list(rst.iter_chunks(RST_DOC))
    intro, install, linux = (embedded(RST, chunk) for chunk in chunks[1:4])
    assert "Widgets turn os.path.join calls into paths; see the setup notes" in intro
    assert "and the website for more." in intro
    assert ":func:" not in intro and "setup-notes" not in intro and "https://" not in intro
    assert "replace::" not in intro and "Widgetry" not in intro and "zanzibar" not in intro
    assert "```python\nimport widgets\nwidgets.install()\n```" in install
    assert "caption" not in install and "linenos" not in install
    assert "note\nInstalling needs a compiler." in install
    assert "Added in version 2.0\nThe --fast flag." in install
    assert "Run this:\n\n```\n$ make widgets\n```" in linux
    assert "secret-page-name" not in linux and "maxdepth" not in linux and "members" not in linux
    assert "automodule widgets.core" not in linux


def test_rst_title_field_heads_the_trail_until_a_section_title() -> None:
    doc = ":title: The Widget Book\n\nAn opening paragraph about widgets.\n\nFirst\n=====\n\nText of the first.\n"
    chunks = list(rst.iter_chunks(doc))
    assert [(chunk.heading, chunk.start_line, chunk.end_line) for chunk in chunks] == [
        ("The Widget Book", 1, 3),
        ("First", 5, 8),
    ]


def test_rst_any_punctuation_adorns_and_transitions_are_no_titles() -> None:
    doc = "Top\n###\n\nintro words\n\n----------\n\nmore words\n\nSub\n'''\n\nsub words\n\nSub two\n'''''''\n\nx y\n"
    chunks = list(rst.iter_chunks(doc))
    assert [chunk.heading for chunk in chunks] == ["Top", "Top > Sub", "Top > Sub two"]
    assert chunks[0].end_line == 8  # the transition is a line of the section, not a title
    assert "----" not in embedded(RST, chunks[0])


def test_rst_code_block_cut_by_the_hard_cap_reads_as_code_in_the_next_chunk() -> None:
    body = "\n".join(f"   value_{n} = compute({n})  # {'x' * 60}" for n in range(80))
    doc = f"Title\n=====\n\n.. code-block:: python\n\n{body}\n\nAfter the code.\n"
    chunks = list(rst.iter_chunks(doc))
    assert len(chunks) >= 2 and all(len(c.text.encode()) <= HARD_LIMIT_BYTES for c in chunks)
    second = chunks[1]
    assert second.open_fence is not None
    assert embedded(RST, second).startswith("```\nvalue_")


ADOC_DOC = """\
= Widget Manual
:toc: left
:secret-attribute: zanzibar
ifdef::env-github[]
:tip-caption: :bulb:
endif::[]

The manual for widgets, see xref:install.adoc#linux[the Linux install] and <<usage,how to use them>>.

include::partial$/etc/passwd[]

== Install

[source,ruby]
----
require 'widgets'
Widgets.install
----

NOTE: Installing needs a compiler.

// a comment for authors: quagga

Usage Notes
-----------

....
literal output
....

=== Deeper

Text of the deeper section, see <<install>>.
"""


def test_asciidoc_sections_and_setext_titles_with_exact_line_ranges() -> None:
    chunks = list(asciidoc.iter_chunks(ADOC_DOC))
    assert [chunk.heading for chunk in chunks] == [
        "Widget Manual",
        "Widget Manual > Install",
        "Widget Manual > Usage Notes",
        "Widget Manual > Usage Notes > Deeper",
    ]
    assert [(chunk.start_line, chunk.end_line) for chunk in chunks] == [
        (1, line_of(ADOC_DOC, "include::")),
        (line_of(ADOC_DOC, "== Install"), line_of(ADOC_DOC, "quagga")),
        (line_of(ADOC_DOC, "Usage Notes"), line_of(ADOC_DOC, "....", 2)),
        (line_of(ADOC_DOC, "=== Deeper"), line_of(ADOC_DOC, "Text of the deeper")),
    ]


def test_asciidoc_embedded_text_keeps_words_and_code_and_leaves_markup_out() -> None:
    head, install, usage, deeper = (embedded(ASCIIDOC, chunk) for chunk in asciidoc.iter_chunks(ADOC_DOC))
    assert "see the Linux install and how to use them." in head
    assert "zanzibar" not in head and "ifdef" not in head and "endif" not in head and "toc" not in head
    assert "include" not in head and "passwd" not in head
    assert "```ruby\nrequire 'widgets'\nWidgets.install\n```" in install
    assert "NOTE: Installing needs a compiler." in install and "quagga" not in install
    assert "```\nliteral output\n```" in usage
    assert "see install." in deeper


def test_plain_text_is_paragraphs_within_the_caps() -> None:
    paragraph = "Widgets are small parts that people fit together to make larger machines. " * 10
    doc = "\n\n".join([paragraph] * 12) + "\n"
    chunks = list(plaintext.iter_chunks(doc))
    assert len(chunks) > 1 and all(chunk.heading == "" for chunk in chunks)
    assert all(len(chunk.text.encode()) <= HARD_LIMIT_BYTES for chunk in chunks)
    lines = doc.split("\n")
    for chunk in chunks:  # each starts and ends on a paragraph of its own lines
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
    assert chunks[0].start_line == 1 and chunks[-1].end_line == len(lines) - 1


def test_a_txt_file_is_rst_by_its_content_else_plain_text_else_no_docs() -> None:
    django_style = (
        "=====================\nWriting your first app\n=====================\n\nLet's learn by example.\n\n"
        ".. code-block:: console\n\n    $ python -m django --version\n"
    )
    assert detect("docs/intro/tutorial01.txt", django_style) is RST
    notes = "Release notes for the widget team.\n\nWe moved the build to a new server this week and it works.\n"
    assert detect("docs/notes.txt", notes) is TEXT
    assert detect("data/points.txt", "1,2,3\n4,5,6\n7,8,9\n") == NotDocs(plaintext.DATA_REASON)
    mit = "MIT License\n\nPermission is hereby granted, free of charge, to any person obtaining a copy\n"
    assert detect("docs/COPYING-widgets.txt", mit) == NotDocs(plaintext.LICENSE_REASON)
    assert detect("docs/readme.rst", "just words, no markup at all\n") is RST  # its ending says rst
    assert name_refusal("requirements.txt") is not None and name_refusal("requirements-dev.txt") is not None
    assert name_refusal("docs/LICENSE.txt") is not None and name_refusal("docs/CMakeLists.txt") is not None
    assert name_refusal("docs/license.rst") is None  # Sphinx's license page is a docs page
    assert name_refusal("docs/guide.txt") is None


# --- R-C5 for every format: generated documents of each format's constructs ---

RST_LINES = [
    "Title", "=====", "-----", "~~~~~", "#####", "Some words of a paragraph.", ".. note::", "   Indented note text.",
    ".. code-block:: python", "   :linenos:", "   x = 1", "Example::", "    literal", ".. toctree::", "   page",
    ".. _target:", ".. |sub| replace:: words", ".. a comment", ":title: A title", ":func:`os.path.join` and more",
    ".. include:: /etc/passwd", "::", "   " * 40 + ".. note::", "", "", "", "x" * 4000, "é" * 1300,
]  # fmt: skip
ADOC_LINES = [
    "= Title", "== Section", "=== Deeper", "Setext", "------", "----", "....", "////", "++++", "====",
    "[source,ruby]", "[NOTE]", ":attr: value", "ifdef::x[]", "endif::[]", "include::/etc/passwd[]", "// comment",
    "NOTE: words", "Some words with xref:a.adoc#b[text] and <<id,label>>.", " literal paragraph", ".Block title",
    "image::x.png[Alt]", "", "", "", "y" * 4000, "ü" * 1300,
]  # fmt: skip
TEXT_LINES = ["A paragraph of plain words for the reader.", "-----", "", "", "z" * 4000, "中" * 1300]
FORMAT_DOCUMENTS = {
    "rst": (st.lists(st.sampled_from(RST_LINES), max_size=120), rst.iter_chunks, rst.readable),
    "asciidoc": (st.lists(st.sampled_from(ADOC_LINES), max_size=120), asciidoc.iter_chunks, asciidoc.readable),
    "text": (st.lists(st.sampled_from(TEXT_LINES), max_size=120), plaintext.iter_chunks, plaintext.readable),
}


def check_format_properties(lines: list[str], chunks: list[Chunk], readable: Any, titles: bool) -> None:
    covered: dict[int, int] = {}
    previous_end = 0
    for chunk in chunks:
        assert len(chunk.text.encode("utf-8")) <= HARD_LIMIT_BYTES
        assert previous_end <= chunk.start_line <= chunk.end_line
        previous_end = chunk.end_line
        if len(lines[chunk.start_line - 1].encode()) <= HARD_LIMIT_BYTES:
            source = lines[chunk.start_line - 1 : chunk.end_line]
            assert chunk.text == "\n".join("" if not line.strip(" \t") else line for line in source)
            for number in range(chunk.start_line, chunk.end_line + 1):
                covered[number] = covered.get(number, 0) + 1
        readable(chunk.text, chunk.open_fence)  # never raises, whatever the cut
    assert all(count == 1 for count in covered.values())
    for number, line in enumerate(lines, start=1):
        if line.strip(" \t") and len(line.encode()) <= HARD_LIMIT_BYTES and number not in covered:
            # only a section's title lines, dropped with a section that held nothing else (R-C2)
            assert titles and title_line(lines, number), f"line {number} is in no chunk: {line!r}"


def title_line(lines: list[str], number: int) -> bool:
    """Could line `number` be part of a section title: an adornment, a line beside one, or an AsciiDoc `=` title?"""
    near = lines[max(0, number - 2) : number + 1]
    return lines[number - 1].startswith("=") or any(rst.is_adornment(line) for line in near)


@pytest.mark.parametrize("name", sorted(FORMAT_DOCUMENTS))
def test_every_format_keeps_the_chunking_properties(name: str) -> None:
    strategy, chunker, readable = FORMAT_DOCUMENTS[name]

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(strategy)
    def check(lines: list[str]) -> None:
        text = "\n".join(lines)
        chunks = list(chunker(text))
        assert list(chunker(text)) == chunks  # deterministic
        assert list(chunker(text.replace("\n", "\r\n"))) == chunks
        check_format_properties(text.split("\n"), chunks, readable, titles=name != "text")

    check()


def test_rst_comments_targets_fields_footnotes_and_tables() -> None:
    doc = (
        "Page\n====\n\n"
        "..\n   A comment block whose body is indented: armadillo.\n\n"
        ".. _hidden-target:\n\n"
        ":param name: the widget's name\n:returns: a widget\n\n"
        "A claim [#why]_ with `a link`_ and |project|.\n\n"
        ".. [#why] The reason behind the claim.\n\n"
        "=====  =====\nkey    value\n=====  =====\n\n"
        "| line one of a line block\n"
    )
    words = embedded(RST, list(rst.iter_chunks(doc))[0])
    assert "armadillo" not in words and "hidden-target" not in words
    assert "param name: the widget's name\nreturns: a widget" in words
    assert "A claim with a link and project." in words
    assert "The reason behind the claim." in words and ".. [#why]" not in words
    assert "key    value" in words and "=====" not in words
    assert "line one of a line block" in words and "| line" not in words


def test_asciidoc_blocks_admonitions_and_cross_references() -> None:
    doc = (
        "= Page\n\n"
        "////\nA comment block: pangolin.\n////\n\n"
        "++++\n<div>raw html: okapi</div>\n++++\n\n"
        "[NOTE]\n====\nAn admonition block.\n====\n\n"
        "See <<install-linux>> and link:https://example.com[the site] and kbd:[Ctrl+T].\n\n"
        "Section Title\n~~~~~~~~~~~~~\n\nUnder a setext title of the third level.\n"
    )
    chunks = list(asciidoc.iter_chunks(doc))
    assert [chunk.heading for chunk in chunks] == ["Page", "Page > Section Title"]
    words = embedded(ASCIIDOC, chunks[0])
    assert "pangolin" not in words and "okapi" not in words
    assert "NOTE\nAn admonition block." in words and "====" not in words
    assert "See install linux and the site and Ctrl+T." in words
    assert embedded(ASCIIDOC, chunks[1]).startswith("Section Title\n\nUnder a setext title")
    unequal = list(asciidoc.iter_chunks("= Page\n\nWords here.\n\nNot a title\n----\ncode line\n----\n"))
    assert len(unequal) == 1 and "```\ncode line\n```" in embedded(ASCIIDOC, unequal[0])  # lengths differ by > 2


@pytest.mark.timeout(20)
def test_an_rst_role_is_read_in_time_proportional_to_its_length() -> None:
    """A role's `label <target>` was split by a pattern (`(.*?)\\s*<`) whose time grew with the square of the role's
    length: 200,000 spaces in one role took minutes of the writer. Labels and bare targets read as before."""
    assert rst.inline_words(":ref:`the setup notes <setup-notes>`") == "the setup notes"
    assert rst.inline_words(":doc:`<guide/install>`") == "guide/install"
    assert rst.inline_words(":func:`~os.path.join`") == "os.path.join"
    assert rst.inline_words(":ref:`a < b>`") == "a"
    assert rst.inline_words(":ref:`x" + " " * 200_000 + "y`").split() == ["x", "y"]

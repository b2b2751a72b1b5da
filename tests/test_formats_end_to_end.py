"""Issue 33 end to end: a small Sphinx tree and a small AsciiDoc tree indexed by default and searched by a real MCP
client over stdio; includes never followed; hostile files indexed or skipped with one line each."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from cli_helpers import run_scree as cli_run
from cli_helpers import scree_env as cli_env
from cli_helpers import search_json, write_file
from mcp.client import Client
from test_mcp_server import Project, run_scree, scree_env, text_of, with_client

SECRET_WORD = "quokkasecretword"  # only in a file outside the indexed folder, which includes point at

SPHINX_INDEX = """\
.. include:: /etc/passwd

.. include:: ../outside/secret.rst

Widget Docs
===========

.. toctree::
   :maxdepth: 2

   install
   api
"""

SPHINX_INSTALL = """\
.. _install:

Installation
============

Widgets need a C compiler before :command:`pip install widgets` works.

Python Version
--------------

We recommend the latest version of Python. Widgets support Python 3.9 and newer.

.. code-block:: sh

    $ python -m pip install widgets

.. versionadded:: 2.1
   Wheels for the rubidium platform.

.. literalinclude:: ../../outside/secret.rst
"""

DJANGO_STYLE_TXT = """\
=======================
Writing your first view
=======================

Let's write the first view. Open the file :file:`polls/views.py` and put the
following code in it:

.. code-block:: python

    from django.http import HttpResponse

Mapping the view to a URL is what the URLconf does for the polls app.
"""

ANTORA_PAGE = """\
= Convert Strings
:navtitle: Strings
include::partial$/etc/passwd[]
include::../../../../outside/secret.rst[]

== Standalone output

To get a complete HTML page with a head and stylesheet, pass the standalone option:

[source,ruby]
----
Asciidoctor.convert '*This*', standalone: true
----

TIP: See xref:api:options.adoc#standalone[the standalone option] for details.
"""


def make_trees(root: Path) -> Project:
    folder = root / "repo"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True, timeout=30)
    write_file(root, "outside/secret.rst", f"Secret\n======\n\n{SECRET_WORD} lives outside the folder.\n")
    write_file(folder, "docs/index.rst", SPHINX_INDEX)
    write_file(folder, "docs/install.rst", SPHINX_INSTALL)
    write_file(folder, "docs/intro/tutorial01.txt", DJANGO_STYLE_TXT)
    write_file(folder, "docs/_build/html/install.txt", "Installation\n============\n\nbuilt copy of installation\n")
    write_file(folder, "docs/locale/de/LC_MESSAGES/install.txt", "msgid installation compiler\n")
    write_file(folder, "antora/modules/api/pages/convert-strings.adoc", ANTORA_PAGE)
    write_file(folder, "requirements.txt", "widgets>=2.1\nsphinx\n")
    write_file(folder, "data/points.txt", "".join(f"{n},{n * 2},{n * 3}\n" for n in range(50)))
    write_file(folder, "notes/team.txt", "Notes from the widget team.\n\nWe moved the builds to a new server.\n")
    env = scree_env(root / "data")
    return Project(folder, env)


def test_sphinx_and_asciidoc_trees_searched_over_mcp(tmp_path: Path) -> None:
    project = make_trees(tmp_path)
    done = run_scree(["reindex", "--notes", str(project.folder)], project.env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Scanned 6 files: 5 indexed"), done.stdout  # _build/ and LC_MESSAGES/ not walked
    assert "  by format: 3 rst, 1 asciidoc, 1 text" in lines, done.stdout
    assert any(line.startswith("  skipped data/points.txt: not docs: data") for line in lines), done.stdout
    assert "requirements.txt" not in done.stdout
    doctor = run_scree(["doctor", "--notes", str(project.folder)], project.env)
    assert "ok    formats: by format: 3 rst, 1 asciidoc, 1 text (1 .txt file not docs)" in doctor.stdout, doctor.stdout
    assert "ok    plain text: a .txt file is not docs when its name is" in doctor.stdout, doctor.stdout

    async def search(client: Client, query: str, mode: str = "keyword", k: int = 1) -> str:
        result = await client.call_tool("search_docs", {"query": query, "k": k, "mode": mode})
        assert result.is_error is False
        return text_of(result)

    async def body(client: Client) -> None:
        text = await search(client, "latest version of Python 3.9")
        assert text.startswith(
            '<hit n="1" path="docs/install.rst" lines="8-20" heading="Installation > Python Version"'
        ), text
        assert "Python Version\n--------------\n" in text  # hits show the source lines as written
        text = await search(client, "URLconf polls app first view")
        assert text.startswith('<hit n="1" path="docs/intro/tutorial01.txt" lines="1-12" '
                               'heading="Writing your first view"'), text  # fmt: skip
        text = await search(client, "complete HTML page head stylesheet standalone")
        assert text.startswith('<hit n="1" path="antora/modules/api/pages/convert-strings.adoc" lines="6-15" '
                               'heading="Convert Strings > Standalone output"'), text  # fmt: skip
        text = await search(client, "widget team moved builds server")
        assert text.startswith('<hit n="1" path="notes/team.txt" lines="1-3"'), text
        for mode in ("keyword", "hybrid"):
            assert SECRET_WORD not in await search(client, SECRET_WORD, mode, k=10)
            assert "root:" not in await search(client, "root bin bash nologin daemon", mode, k=10)
        assert "built copy" not in await search(client, "built copy of installation", "keyword", k=10)

        result = await client.call_tool("read_doc", {"path": "docs/install.rst", "start": 13, "end": 15})
        assert text_of(result) == (
            '<doc path="docs/install.rst" lines="13-15">\n.. code-block:: sh\n\n    $ python -m pip install widgets\n'
            "</doc>"
        )  # the raw lines, markup and all
        result = await client.call_tool("read_doc", {"path": "data/points.txt"})
        assert result.is_error and "not docs: data" in text_of(result)
        result = await client.call_tool("read_doc", {"path": "requirements.txt"})
        assert result.is_error and "not docs: its name matches requirements*.txt" in text_of(result)

    with_client(project, body)


def hostile_tree(root: Path) -> Path:
    folder = root / "hostile"
    write_file(folder, "many-adornments.rst", "Title\n=====\n\n" + "=====\n\n" * 100_000)
    nested = "".join("   " * depth + ".. note::\n\n" for depth in range(1000))
    write_file(folder, "nested.rst", nested + "zebrafinch nesting\n")
    write_file(folder, "attributes.adoc", "".join(f":attr-{n}: value {n}\n" for n in range(20_000)))
    write_file(folder, "binary.rst", b"Title\n=====\n\x00\x01\x02" + bytes(range(256)) * 40)
    write_file(folder, "include.rst", "Inc\n===\n\n.. include:: /etc/passwd\n.. literalinclude:: /etc/shadow\n")
    write_file(folder, "include.adoc", "= Inc\n\ninclude::/etc/passwd[]\n")
    paragraph = "Words of a long plain text file, one sentence after another, to be indexed in pieces.\n"
    block = paragraph * 12 + "\n"
    write_file(folder, "huge.txt", block * (50_000_000 // len(block)))  # 50 MB: over the 1 MB default cap
    write_file(folder, "large.txt", block * (3_000_000 // len(block)))  # 3 MB: chunked a slice at a time
    return folder


def test_hostile_inputs_are_indexed_or_skipped_with_one_line(tmp_path: Path) -> None:
    folder = hostile_tree(tmp_path)
    env = cli_env(tmp_path / "data", SCREE_EMBEDDER="hash", SCREE_MAX_FILE_BYTES="4000000")
    done = cli_run("reindex", "--notes", str(folder), env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Scanned 8 files: 6 indexed"), done.stdout
    assert "  skipped binary.rst: binary (NUL bytes)" in lines, done.stdout
    assert "  skipped huge.txt: larger than SCREE_MAX_FILE_BYTES (4000000 bytes)" in lines, done.stdout
    assert "  by format: 3 rst, 2 asciidoc, 1 text" in lines, done.stdout

    def keyword(query: str) -> list[dict[str, Any]]:
        hits: list[dict[str, Any]] = search_json(folder, query, env, "--mode", "keyword", "-k", "10")["hits"]
        return hits

    deep = keyword("zebrafinch")
    assert deep and (deep[0]["path"], deep[0]["end"]) == ("nested.rst", 2001)
    assert keyword("root nologin daemon") == []  # /etc/passwd was never read
    large = keyword("indexed in pieces sentence")
    assert large and {hit["path"] for hit in large} == {"large.txt"}
    assert all(re.fullmatch(r"\d+", str(hit["start"])) for hit in large)

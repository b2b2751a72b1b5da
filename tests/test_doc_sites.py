"""Issue 25: a real docs site as a new user meets it: .mdx pages are indexed by default (their import, export and
JSX-only lines kept out of what is embedded, their line numbers as the file has them), and files of other doc
formats that are left out (no row of the table of formats claims them, issue 33) are counted by reindex and doctor,
naming SCREE_EXTENSIONS."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import main_here, run_scree, scree_env, search_json, write_file

from scree.content.chunking import chunk_markdown
from scree.content.formats import detect, embedded_text

MDX_PAGE = """---
title: Installing the CLI
---

import Tabs from '@theme/Tabs';
import TabItem from '@theme/TabItem';

Pick the package manager your platform uses.

<Tabs>
<TabItem value="brew" label="Homebrew">

```bash
brew install quokka
```

</TabItem>
</Tabs>

## Verifying

Run quokka version to check the install worked: it prints the version and where the binary is.
"""


def test_mdx_pages_are_indexed_by_default_and_other_doc_files_are_counted(tmp_path: Path) -> None:
    folder = tmp_path / "site"
    write_file(folder, "docs/install.mdx", MDX_PAGE)
    write_file(folder, "docs/intro.md", "# Intro\n\nQuokka is a small marsupial command line tool.\n")
    write_file(folder, "docs/legacy/setup.org", "* Setup\n\nOld setup notes.\n")
    write_file(folder, "docs/legacy/usage.org", "* Usage\n\nOld usage notes.\n")
    write_file(folder, "docs/notes.textile", "h1. plain notes\n")
    write_file(folder, "build/ignored.org", "ignored\n")
    write_file(folder, ".gitignore", "build/\n")
    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="hash")

    reindex = run_scree("reindex", "--notes", str(folder), env=env)
    assert reindex.returncode == 0, reindex.stderr
    lines = reindex.stdout.splitlines()
    assert lines[0].startswith("Scanned 2 files: 2 indexed"), reindex.stdout
    assert "  left out: 2 .org, 1 .textile files (not indexed: SCREE_EXTENSIONS=.org,.textile adds them)" in lines

    hits = search_json(folder, "homebrew install quokka", env, "--mode", "keyword", run=main_here)["hits"]
    assert hits[0]["path"] == "docs/install.mdx"
    verifying = search_json(folder, "check the install worked", env, "--mode", "keyword", run=main_here)["hits"][0]
    assert (verifying["path"], verifying["start"], verifying["end"]) == ("docs/install.mdx", 20, 22)

    doctor = run_scree("doctor", "--notes", str(folder), env=env)
    assert "ok    other doc files: left out: 2 .org, 1 .textile files (not indexed: SCREE_EXTENSIONS=.org,.textile " \
        "adds them)" in doctor.stdout.splitlines(), doctor.stdout  # fmt: skip

    with_org = scree_env(tmp_path / "data", SCREE_EMBEDDER="hash", SCREE_EXTENSIONS=".org,.textile")
    again = run_scree("reindex", "--notes", str(folder), env=with_org)
    assert again.stdout.startswith("Scanned 5 files: 3 indexed"), again.stdout
    assert "left out" not in again.stdout
    doctor = run_scree("doctor", "--notes", str(folder), env=with_org)
    assert "ok    other doc files: none left out" in doctor.stdout.splitlines(), doctor.stdout


def test_what_is_embedded_of_an_mdx_page_leaves_its_code_lines_out() -> None:
    chunks = chunk_markdown(MDX_PAGE)
    assert [(chunk.start_line, chunk.end_line) for chunk in chunks] == [(5, 18), (20, 22)]
    mdx, markdown = detect("docs/install.mdx", MDX_PAGE), detect("docs/install.md", MDX_PAGE)
    assert (getattr(mdx, "name", None), getattr(markdown, "name", None)) == ("mdx", "markdown")
    embedded = embedded_text("docs/install.mdx", chunks[0], mdx)
    assert "import" not in embedded and "Tabs" not in embedded and "TabItem" not in embedded
    assert "Pick the package manager your platform uses." in embedded and "brew install quokka" in embedded
    assert "import Tabs" in embedded_text("docs/install.md", chunks[0], markdown)  # a .md file's text is its own

"""One 985 KB line of JSX in an .mdx page (issue 34 item 8): its pieces hold component tags and attribute values
only, so they stay out of what is embedded (quickly: the old whole-line pattern backtracked exponentially on a
piece cut mid-tag) and are ranked as the thin chunks they are; the prose that holds the query's words is the first
hit. Real `scree reindex` and `scree search` processes over a real file."""

from __future__ import annotations

from pathlib import Path

from backends import Backend
from cli_helpers import search_json
from fault_helpers import hash_env, scree
from test_store import raw

from scree.content import formats
from scree.content.chunking import chunk_markdown, thin
from scree.content.formats import MDX, embedded_text, keyword_text
from scree.search.query import keyword_match
from scree.store import SqliteWriter
from scree.store.schema import SCHEMA_VERSION, migrate

CARD = '<Card title="Install the rotating key guide" href="/keys/rotate"><Icon name="key" size={16} /></Card>'
JSX_LINE = "<Cards>" + CARD * (985_000 // len(CARD)) + "</Cards>"
PAGE = (
    "---\ntitle: Keys\n---\n\n"
    + JSX_LINE
    + "\n\n## Rotating a key\n\nTo rotate the key, install the new key first, then remove the old one from the guide.\n"
)


def test_a_long_jsx_line_stays_out_of_what_is_embedded_and_ranks_under_the_prose(tmp_path: Path) -> None:
    chunks = chunk_markdown(PAGE)
    jsx = [c for c in chunks if "<Card" in c.text]
    assert len(jsx) > 100  # a line longer than a chunk is cut in pieces
    for chunk in jsx[:50]:
        embedded = embedded_text("docs/keys.mdx", chunk, MDX)
        assert "<Card" not in embedded and "href=" not in embedded, embedded[:300]
        assert thin(chunk.text), chunk.text[:200]
    prose = next(c for c in chunks if "To rotate the key" in c.text)
    assert not thin(prose.text)

    folder = tmp_path / "notes"
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "keys.mdx").write_text(PAGE, encoding="utf-8")
    env = hash_env(tmp_path / "data")
    built = scree(env, "reindex", "--notes", str(folder), timeout=300)
    assert built.returncode == 0, built.stderr
    for mode in ("hybrid", "keyword"):  # keyword search weighs no JSX either: the attribute values are no words
        hits = search_json(folder, "rotate the key install guide", env, "-k", "3", "--mode", mode)["hits"]
        assert hits and "To rotate the key" in hits[0]["text"], (mode, [h["text"][:80] for h in hits])


def test_keyword_text_of_an_mdx_chunk_keeps_its_prose_and_code_and_drops_its_tags() -> None:
    text = (
        "import Tabs from '@theme/Tabs'\n\n"
        '<Tabs><TabItem value="linux" label="Linux">Run the installer.</TabItem>\n'
        '```jsx\n<Tabs groupId="os" />\n```\n'
        'rotate the key" href="/keys/rotate"><Icon name="key" /></Card><Card title="Install'
    )
    assert keyword_text("docs/a.mdx", text).split("\n") == [
        "",
        "",
        "Run the installer.",
        "```jsx",
        '<Tabs groupId="os" />',  # a code example keeps its tags
        "```",
        "",  # a piece cut mid-tag: attribute values only
    ]
    assert keyword_text("docs/a.md", text) == text  # markdown's JSX-looking text is the page's own


def test_an_index_of_the_old_schema_is_upgraded_to_weigh_no_jsx(tmp_path: Path) -> None:
    """Migration 6 rebuilds the word index from each chunk's keyword text: an .mdx chunk indexed before it (its
    tags weighed) ranks under the prose afterwards, with nothing re-embedded and FTS5's own check passing."""
    folder = tmp_path / "notes"
    folder.mkdir()
    db_path = tmp_path / "index.db"
    conn = raw(db_path)  # with scree's SQL functions: migration 5's triggers call scree_cjk_pairs
    assert migrate(conn, upto=5) == [1, 2, 3, 4, 5]
    conn.execute("insert into meta(key, value) values ('folder', ?)", (str(folder.resolve()),))
    conn.execute("insert into files values ('docs/keys.mdx', 'abc', 1, 2)")
    prose = "## Rotating a key\n\nTo rotate the key, install the new key first, then remove the old one."
    for ordinal, text in enumerate((CARD * 30, prose)):
        conn.execute(
            "insert into chunks(path, ordinal, heading, text, start_line, end_line, text_hash) "
            "values ('docs/keys.mdx', ?, 'Keys', ?, ?, ?, ?)",
            (ordinal, text, ordinal + 1, ordinal + 1, f"hash-{ordinal}"),
        )
    before = [row[0] for row in conn.execute(QUERY_SQL)]
    conn.close()
    assert before[:1] == [1]  # the tags' "Install ... rotating key guide" outranked the prose

    with SqliteWriter.open(db_path, folder) as upgraded:
        assert upgraded.get_meta("schema_version") == str(SCHEMA_VERSION)
        assert upgraded.integrity_check() == "ok"
        match = keyword_match("rotate the key install guide")
        ranked = [chunk_id for chunk_id, _ in upgraded.keyword_lists(match, 5)[0]]
        assert ranked == [2, 1]  # the tags' piece now matches by its heading alone


QUERY_SQL = (
    'select rowid from chunks_fts where chunks_fts match \'"rotate" OR "key" OR "install" OR "guide"\' '
    "order by bm25(chunks_fts, 2.0, 1.0)"
)


def test_keyword_search_ranks_the_prose_over_the_tags_on_both_backends(tmp_path: Path, index_backend: Backend) -> None:
    folder = tmp_path / "notes"
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "keys.mdx").write_text(PAGE, encoding="utf-8")
    with index_backend.engine(folder) as engine:
        hits = engine.search("rotate the key install guide", k=3, mode="keyword").hits
    assert hits and "To rotate the key" in hits[0].text, [hit.text[:60] for hit in hits]


IMPORTS = (
    "import Callout from '@mdx/Callout.astro';\nimport Steps from '@mdx/Steps.astro';\n"
    "import Tabs from '@mdx/Tabs.astro';\n\n"
)
MIGRATIONS = (
    f"{IMPORTS}# Drizzle migrations fundamentals\n\n<Callout>\nRead the schema page first.\n</Callout>\n\n"
    "SQL databases need a strict schema up front; the migrate command applies each pending SQL file to the "
    "database in order and records it in a journal table.\n"
)


def test_an_mdx_page_s_imports_above_its_title_are_never_a_hit(tmp_path: Path, index_backend: Backend) -> None:
    """Drizzle's docs open every page with a block of component imports above its title: a chunk whose embedded
    text is the path alone, which came first for "How do I run migrations?" (pg/migrations.mdx) and showed its import
    lines. By the .mdx rules they are no words: thin, and nothing to show; the page's prose answers. In a .md page
    the same lines are text."""
    folder = tmp_path / "site"
    (folder / "docs" / "pg").mkdir(parents=True)
    (folder / "docs" / "pg" / "migrations.mdx").write_text(MIGRATIONS, encoding="utf-8")
    (folder / "docs" / "pg" / "schema.mdx").write_text(f"{IMPORTS}# Schema\n\nDeclare each table in TypeScript.\n")
    with index_backend.engine(folder) as engine:
        for mode in ("hybrid", "keyword", "semantic"):
            hits = engine.search("migrations", k=5, mode=mode).hits
            assert hits and all("import Callout" not in hit.text for hit in hits), (mode, [h.text[:40] for h in hits])
            assert hits[0].path == "docs/pg/migrations.mdx", (mode, hits[0].path)
    assert formats.is_thin("docs/pg/migrations.mdx", IMPORTS) and formats.too_little("docs/pg/migrations.mdx", IMPORTS)
    assert not formats.is_thin("docs/pg/migrations.md", IMPORTS) and not formats.too_little(
        "docs/migrations.md", IMPORTS
    )

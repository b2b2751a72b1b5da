"""One 985 KB line of JSX in an .mdx page (issue 34 item 8): its pieces hold component tags and attribute values
only, so they stay out of what is embedded (quickly: the old whole-line pattern backtracked exponentially on a
piece cut mid-tag) and are ranked as the thin chunks they are; the prose that holds the query's words is the first
hit. Real `scree reindex` and `scree search` processes over a real file."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import search_json
from fault_helpers import hash_env, scree

from scree.content.chunking import chunk_markdown, thin
from scree.content.formats import MDX, embedded_text

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
    # the default mode; keyword mode alone still weighs the tags' attribute values (the keyword index holds the
    # chunk's text as written: issue 34's report)
    hits = search_json(folder, "rotate the key install guide", env, "-k", "3")["hits"]
    assert hits and "To rotate the key" in hits[0]["text"], [h["text"][:80] for h in hits]

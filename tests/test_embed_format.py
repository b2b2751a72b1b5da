"""#11, R-F3: an index whose vectors were made from an older embedded text is refused, never mixed, until rebuilt."""

from __future__ import annotations

from pathlib import Path

import apsw
from cli_helpers import main_here, reindex_here, run_scree, scree_env, search_json, write_file

from scree.index.folder import index_dir_for


def test_an_index_from_before_the_embedded_text_changed_is_refused_until_reindex_all(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    write_file(folder, "api.md", "# API { #api }\n\nTokens authenticate every request.\n")
    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="hash")
    reindex_here(env, folder)  # set-up: the index to age
    db = index_dir_for(folder, env) / "index.db"
    conn = apsw.Connection(str(db))  # what an index built before the format was recorded looks like
    conn.execute("delete from meta where key = 'embed_format'")
    conn.close()
    write_file(folder, "new.md", "# New\n\nA note written after the upgrade.\n")

    refused = run_scree("reindex", "--notes", str(folder), env=env)
    assert refused.returncode == 1
    assert len(refused.stderr.strip().splitlines()) == 1 and "Traceback" not in refused.stderr
    assert "older scree" in refused.stderr and "`scree reindex --all`" in refused.stderr
    assert [
        hit["path"] for hit in search_json(folder, "upgrade", env, "--mode", "keyword", run=main_here)["hits"]
    ] == []

    rebuilt = run_scree("reindex", "--all", "--notes", str(folder), env=env)
    assert rebuilt.returncode == 0, rebuilt.stderr
    hits = search_json(folder, "tokens", env, run=main_here)["hits"]
    assert hits[0]["path"] == "api.md" and hits[0]["heading"] == "API"
    assert search_json(folder, "upgrade", env, "--mode", "keyword", run=main_here)["hits"][0]["path"] == "new.md"

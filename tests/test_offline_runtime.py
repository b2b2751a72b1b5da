"""The offline model under OpenVINO (issues 23 and 35) end to end: a writer's first sync and a query on the real model,
and a reader whose keyword searches never load the runtime."""

from __future__ import annotations

import sys
from pathlib import Path

from cli_helpers import SCREE, run_scree, scree_env, search_json

RUNTIME = ("openvino", "numpy", "tokenizers")


def _write_notes(folder: Path) -> None:
    folder.mkdir()
    (folder / "keys.md").write_text("# Rotating keys\n\nHow to rotate the signing key every ninety days.\n")
    (folder / "garden.md").write_text("# Tomatoes\n\nWater tomato plants in the morning, not at night.\n")
    (folder / "long.md").write_text("# Long\n\n" + "A paragraph about deployment pipelines and caches. " * 200)


def _imported(args: tuple[str, ...], env: dict[str, str]) -> set[str]:
    import subprocess

    proc = subprocess.run([sys.executable, "-X", "importtime", SCREE, *args], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [line.split("|")[-1] for line in proc.stderr.splitlines() if line.startswith("import time:")]
    assert len(rows) > 50, proc.stderr[-3000:]
    return {row.strip().split(".")[0] for row in rows}


def test_first_sync_and_a_query_on_the_real_model(installed: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    _write_notes(notes)
    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="local", SCREE_LOCAL_MODEL_DIR=str(installed))
    synced = run_scree("reindex", "--notes", str(notes), env=env, timeout=300)
    assert synced.returncode == 0, synced.stderr
    assert "Traceback" not in synced.stderr
    found = search_json(notes, "when should I change the signing key", env, "--mode", "semantic")
    assert found["hits"] and found["hits"][0]["path"] == "keys.md", found
    found = search_json(notes, "watering vegetables", env, "--mode", "semantic")
    assert found["hits"][0]["path"] == "garden.md", found
    # the reader's keyword search loads nothing of the runtime; a semantic one does (the control)
    keyword = _imported(("search", "--notes", str(notes), "--mode", "keyword", "tomato"), env)
    assert "scree" in keyword and not keyword & set(RUNTIME), sorted(keyword & set(RUNTIME))
    semantic = _imported(("search", "--notes", str(notes), "--mode", "semantic", "tomato"), env)
    assert "openvino" in semantic

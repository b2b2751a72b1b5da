"""Zero configuration (R-E6): no key and no model still indexes for keyword search, with a note saying how to get
search by meaning; once the offline model is there, the next reindex rebuilds the index with vectors."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import run_scree, scree_env, search_json

DOCS = {
    "garden.md": "# Garden\n\nCompost needs air, water and brown leaves to break down.\n",
    "rain.md": "# Rain\n\nA rainwater tank collects water from the roof for dry summers.\n",
}


def make_folder(root: Path) -> Path:
    folder = root / "notes"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_no_key_no_model_keyword_search_with_a_note_then_vectors_after_install(tmp_path: Path, installed: Path) -> None:
    folder = make_folder(tmp_path)
    empty = tmp_path / "no-model"
    empty.mkdir()
    env = scree_env(tmp_path / "data", SCREE_LOCAL_MODEL_DIR=str(empty))
    proc = run_scree("reindex", "--notes", str(folder), env=env)
    assert proc.returncode == 0, proc.stderr
    assert "2 indexed" in proc.stdout
    for mode in ("keyword", "hybrid"):
        result = search_json(folder, "compost leaves", env, "--mode", mode)
        assert result["hits"][0]["path"] == "garden.md"
        assert result["note"] and "semantic search is off" in result["note"]
        assert "scree model install" in result["note"]
    semantic = run_scree("search", "--notes", str(folder), "--mode", "semantic", "compost", env=env)
    assert semantic.returncode == 1 and "scree model install" in semantic.stderr
    assert len(semantic.stderr.strip().splitlines()) == 1

    env["SCREE_LOCAL_MODEL_DIR"] = str(installed)  # `scree model install` since: the index still has no vectors
    for mode in ("keyword", "hybrid"):
        result = search_json(folder, "compost leaves", env, "--mode", mode)
        assert result["hits"][0]["path"] == "garden.md"
        assert "built for keyword search only" in result["note"] and '"scree reindex"' in result["note"]
        assert "model install" not in result["note"]
    semantic = run_scree("search", "--notes", str(folder), "--mode", "semantic", "compost", env=env)
    assert semantic.returncode == 1 and '"scree reindex" to add its vectors' in semantic.stderr
    assert "model install" not in semantic.stderr and len(semantic.stderr.strip().splitlines()) == 1
    doctor = run_scree("doctor", "--notes", str(folder), env=env)
    advice = [line for line in doctor.stdout.splitlines() if "index model" in line]
    assert len(advice) == 1 and '"scree reindex"' in advice[0] and "model install" not in advice[0], doctor.stdout

    proc = run_scree("reindex", "--notes", str(folder), env=env)
    assert proc.returncode == 0, proc.stderr
    status = json.loads(run_scree("status", "--json", "--notes", str(folder), env=env).stdout)
    assert status["model"] == "local:all-MiniLM-L6-v2" and status["dimensions"] == 384
    result = search_json(folder, "storing precipitation for droughts", env, "--mode", "semantic")
    assert result["note"] is None
    assert result["hits"][0]["path"] == "rain.md"
    assert 0 < result["hits"][0]["score"] <= 1


def test_switching_from_the_offline_model_to_the_api_names_reindex_all(tmp_path: Path, installed: Path) -> None:
    folder = make_folder(tmp_path)
    env = scree_env(tmp_path / "data", SCREE_LOCAL_MODEL_DIR=str(installed))
    assert run_scree("reindex", "--notes", str(folder), env=env).returncode == 0
    with_key = {**env, "SCREE_API_KEY": "sk-some-key-1234", "SCREE_API_BASE": "http://127.0.0.1:9/v1"}
    proc = run_scree("reindex", "--notes", str(folder), env=with_key)
    assert proc.returncode == 1 and "reindex --all" in proc.stderr and "Traceback" not in proc.stderr
    hybrid = search_json(folder, "compost", with_key)  # never a mixed index: keyword results and a clear note
    assert hybrid["hits"][0]["path"] == "garden.md"
    assert hybrid["note"] and "reindex --all" in hybrid["note"]

"""Issue 25 item 9: a file of LARGE_FILE_BYTES or more is chunked, embedded and written a slice at a time inside its
one transaction (R-S2), through the installed CLI against a real embeddings server on 127.0.0.1."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

from cli_helpers import SCREE, run_scree, scree_env, wait_until, write_file
from embed_server import EmbedServer

from scree.content.chunking import chunk_markdown
from scree.writer_proc.sync import LARGE_FILE_BYTES

MAX_BYTES = str(4 * LARGE_FILE_BYTES)


def _big_text(version: str) -> str:
    """Sections of ~2.5 KB each, past LARGE_FILE_BYTES in all; `version` is in every section's text."""
    body = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 40).strip()
    parts, size, n = [], 0, 0
    while size < LARGE_FILE_BYTES * 1.2:
        part = f"## Section {n}\n\nRelease {version} of section {n}. {body}\n"
        parts.append(part)
        size += len(part)
        n += 1
    return "# Handbook\n\n" + "\n".join(parts)


def _status(folder: Path, env: dict[str, str]) -> dict[str, object]:
    proc = run_scree("status", "--json", "--notes", str(folder), env=env)
    assert proc.returncode == 0, proc.stderr
    found: dict[str, object] = json.loads(proc.stdout)
    return found


def _texts(folder: Path, env: dict[str, str], query: str) -> list[str]:
    proc = run_scree("search", "--notes", str(folder), "--json", "--mode", "keyword", "-k", "50", query, env=env)
    assert proc.returncode == 0, proc.stderr
    return [hit["text"] for hit in json.loads(proc.stdout)["hits"]]


def test_a_large_file_is_indexed_whole_and_an_edit_reuses_its_other_vectors(
    tmp_path: Path, embed_server: EmbedServer
) -> None:
    folder = tmp_path / "notes"
    text = _big_text("alpha")
    write_file(folder, "big.md", text)
    write_file(folder, "small.md", "# Small\n\nA small note beside the big one.\n")
    env = scree_env(tmp_path / "data", embed_server.url, SCREE_MAX_FILE_BYTES=MAX_BYTES)
    proc = run_scree("reindex", "--notes", str(folder), env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Scanned 2 files: 2 indexed, 0 removed, 0 failed, 0 deferred.")
    chunks = len(chunk_markdown(text))
    assert _status(folder, env)["chunks"] == chunks + 1
    sent = sum(len(r["json"]["input"]) for r in embed_server.recorded())
    assert sent == chunks + 1  # every chunk embedded once, in full batches
    assert embed_server.request_count() <= (chunks + 1) // 64 + 2

    edited = text.replace("Release alpha of section 3.", "Release omega of section 3.")
    write_file(folder, "big.md", edited)
    before = embed_server.request_count()
    proc = run_scree("reindex", "--notes", str(folder), env=env, timeout=300)
    assert proc.returncode == 0 and proc.stdout.startswith("Scanned 2 files: 1 indexed"), proc.stderr
    inputs = [text for r in embed_server.recorded()[before:] for text in r["json"]["input"]]
    assert len(inputs) == 1 and "Release omega of section 3." in inputs[0]  # the other chunks kept their vectors
    assert _status(folder, env)["chunks"] == chunks + 1
    assert any("Release omega of section 3." in hit for hit in _texts(folder, env, "omega"))


def test_an_interrupt_in_the_middle_of_a_large_file_keeps_all_its_old_rows(
    tmp_path: Path, embed_server: EmbedServer
) -> None:
    folder = tmp_path / "notes"
    write_file(folder, "big.md", _big_text("alpha"))
    env = scree_env(tmp_path / "data", embed_server.url, SCREE_MAX_FILE_BYTES=MAX_BYTES, SCREE_BATCH_SIZE="16")
    assert run_scree("reindex", "--notes", str(folder), env=env, timeout=300).returncode == 0
    old = _status(folder, env)

    write_file(folder, "big.md", _big_text("beta"))  # every section changed
    embed_server.set(delay_s=0.3)
    start = embed_server.request_count()
    with subprocess.Popen(
        [SCREE, "reindex", "--notes", str(folder)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    ) as proc:
        wait_until(lambda: embed_server.request_count() >= start + 3, "the large file half embedded", 120)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and b"Traceback" not in err, err
    embed_server.set(delay_s=0.0)
    assert _status(folder, env)["chunks"] == old["chunks"]
    assert _texts(folder, env, "beta") == []  # nothing of the new text: the file is all old (R-S2)
    assert len(_texts(folder, env, "alpha")) == 50

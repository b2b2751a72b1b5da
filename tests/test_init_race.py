"""`scree init` racing another program that edits the same `.mcp.json` without scree's folder lock (issue 34 item 8):
the other program's entries must never be lost. A real editor process pounces the moment scree makes its temporary
file (inotify), so its write lands between scree's read and scree's replace: scree reads again (once), or refuses
and leaves the file as the editor wrote it. Between rounds the test waits for the editor to have answered every
temporary file (a sync file it creates comes after them in inotify's queue), so the test's own edit races nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fault_helpers import hash_env, no_traceback, scree

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")

ROUNDS = 3
# Adds one entry of its own (editorN) each time scree creates its temporary file beside .mcp.json: read, add, write
# to a temporary file of its own, rename over. It prints each entry it wrote, and "synced" when it sees a sync file.
EDITOR = """
import json, os, sys, time
from inotify_simple import INotify, flags
repo = sys.argv[1]
target = os.path.join(repo, ".mcp.json")
ino = INotify()
ino.add_watch(repo, flags.CREATE)
print("ready", flush=True)
n = 0
end = time.monotonic() + 60
while time.monotonic() < end:
    for event in ino.read(timeout=200):
        if event.name.startswith("sync-"):
            print("synced", flush=True)
        elif ".mcp.json." in event.name:  # scree's temporary file: it has read the config by now
            with open(target) as handle:
                data = json.load(handle)
            data["mcpServers"][f"editor{n}"] = {"command": "editor"}
            with open(os.path.join(repo, "editor.tmp"), "w") as handle:
                json.dump(data, handle)
            os.replace(os.path.join(repo, "editor.tmp"), target)
            print(f"editor{n}", flush=True)
            n += 1
"""


def test_init_never_loses_the_entries_of_a_program_editing_the_file_meanwhile(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    config = repo / ".mcp.json"
    config.write_text(json.dumps({"mcpServers": {"theirs": {"command": "theirs"}}}))
    env = hash_env(tmp_path / "data")
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(repo)], stdout=subprocess.PIPE, text=True)
    try:
        assert editor.stdout is not None and editor.stdout.readline().strip() == "ready"
        outcomes = []
        wrote: set[str] = set()
        for n in range(ROUNDS):
            done = scree(env, "init", "--notes", str(repo))
            no_traceback(done.stderr)
            outcomes.append(done.returncode)
            if done.returncode != 0:
                assert "changed while scree was writing it" in done.stderr, done.stderr
            (repo / f"sync-{n}").touch()
            for line in iter(editor.stdout.readline, "synced\n"):
                assert line, "the editor ended before it saw the sync file"
                wrote.add(line.strip())
            data = json.loads(config.read_text())
            data["mcpServers"].pop("scree", None)  # the next round adds it again
            config.write_text(json.dumps(data))
    finally:
        editor.kill()
        editor.communicate(timeout=10)
    entries = set(json.loads(config.read_text())["mcpServers"])
    assert wrote, "the editor never saw scree's temporary file"
    assert wrote | {"theirs"} <= entries, f"lost: {sorted(wrote - entries)}; scree exit codes {outcomes}"

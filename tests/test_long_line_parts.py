"""A line too long for one chunk (issue 34): its chunks all have its one line number, so each hit also names which
part of the line it is (part="n/m"), and read_doc shows that part alone (start=the line, part=n), cut as the chunker
cuts it. A real folder indexed by `scree reindex`, read through the MCP tools."""

from __future__ import annotations

import re
from pathlib import Path

from cli_helpers import run_scree, scree_env, write_file
from test_mcp_tools import FakeControl, call, text_of

from scree.config import load_settings
from scree.content.chunking import line_parts

WORDS = "the config loader reads each setting from the file and the environment in turn before it starts "
LONG_LINE = WORDS * 300 + "zanzibar marks the one place the flag is read " + WORDS * 200  # ~50 KB, one line
PAGE = "# Settings\n\n" + LONG_LINE + "\n\nA short closing paragraph about nothing in particular.\n"


def test_hits_from_one_long_line_name_their_part_and_read_doc_shows_just_it(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    write_file(folder, "docs/settings.md", PAGE)
    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="hash", SCREE_LOG_LEVEL="warning")
    done = run_scree("reindex", "--notes", str(folder), env=env)
    assert done.returncode == 0, done.stderr
    settings, control = load_settings(env, notes=str(folder)), FakeControl()
    parts = line_parts(LONG_LINE)
    assert len(parts) > 10
    wanted = next(n for n, piece in enumerate(parts, start=1) if "zanzibar" in piece)

    hits = text_of(call(settings, control, "search_docs", {"query": "zanzibar", "mode": "keyword"}))
    first = hits.split("\n", 1)[0]
    assert 'lines="3-3"' in first and f'part="{wanted}/{len(parts)}"' in first, first

    read = text_of(call(settings, control, "read_doc", {"path": "docs/settings.md", "start": 3, "part": wanted}))
    head, _, rest = read.partition("\n")
    assert head == f'<doc path="docs/settings.md" part="{wanted}/{len(parts)}" lines="3-3">', head
    assert rest == parts[wanted - 1] + "\n</doc>"

    whole = text_of(call(settings, control, "read_doc", {"path": "docs/settings.md", "start": 3, "end": 3}))
    assert whole.endswith(f"[line 3 is long: read it in {len(parts)} parts, start=3 with part=1 to {len(parts)}]")

    short = text_of(call(settings, control, "search_docs", {"query": "closing paragraph", "mode": "keyword"}))
    assert re.search(r'<hit n="1" path="docs/settings.md" lines="5-5" heading', short), short  # a whole line: no part


def test_read_doc_refuses_a_part_it_cannot_show(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    write_file(folder, "docs/settings.md", PAGE)
    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="hash", SCREE_LOG_LEVEL="warning")
    assert run_scree("reindex", "--notes", str(folder), env=env).returncode == 0
    settings, control = load_settings(env, notes=str(folder)), FakeControl()
    count = len(line_parts(LONG_LINE))
    for arguments, error in [
        ({"start": 3, "part": count + 1}, f"error: line 3 has {count} parts"),
        ({"start": 1, "part": 2}, "error: line 1 has 1 part"),
        ({"part": 1}, "error: part needs start, the line it is a part of, and no other end"),
        ({"start": 3, "end": 5, "part": 1}, "error: part needs start, the line it is a part of, and no other end"),
        ({"start": 3, "part": 0}, "error: part must be an integer of at least 1"),
    ]:
        result = call(settings, control, "read_doc", {"path": "docs/settings.md", **arguments})
        assert result.is_error and error in text_of(result), (arguments, text_of(result))

"""What scree prints stays inert and exact (issue 13, items 14, 15, 18; R-M1, R-L0): terminal escapes in file names,
headings, hit text and API error bodies are shown, never run; twins cannot crowd out a reply; every hit path can
be read back with read_doc."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from backends import Backend
from cli_helpers import reindex_here, write_file
from embed_server import EmbedServer
from fault_helpers import RawMcp, api_env, hash_env, no_traceback, scree, text_of

from scree.inert import attribute, inert, json_inert
from scree.search.hits import Hit
from scree.search.render import ALSO_SHOWN, render_hits

TITLE = "\x1b]0;PWNED\x07"  # OSC: retitles the terminal
CLEAR = "\x1b[2J"  # CSI: clears the screen
C1_CSI = "\x9b31m"  # C1 CSI, honoured by some terminals
BIDI = "\u202e"  # right-to-left override
ZERO_WIDTH = "\u200b"
RAW_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b-\u200f]")


def assert_inert(text: str) -> None:
    found = RAW_UNSAFE.findall(text)
    assert not found, (found, text[:500])


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    write_file(root, "hostile.md", f"# Head {TITLE} {BIDI}ing\n\nwombats {CLEAR} wander {C1_CSI} widely{ZERO_WIDTH}\n")
    write_file(root, "plain.md", "# Plain\n\nwombats are plain\n")
    fd = os.open(os.path.join(root, f"name{TITLE}.md"), os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"# Named\n\nwombats in the name\n")
    os.close(fd)
    return root


# --- item 14: terminal escapes made inert ---


def test_reindex_search_and_logs_show_escapes_instead_of_running_them(hostile: Path, tmp_path: Path) -> None:
    env = hash_env(tmp_path / "data", SCREE_LOG_LEVEL="info")
    done = scree(env, "reindex", "--notes", str(hostile))
    no_traceback(done.stderr)
    assert done.returncode == 0, done.stderr
    assert_inert(done.stdout)
    assert_inert(done.stderr)
    assert "skipped name\\x1b]0;PWNED\\x07.md: file name has a character" in done.stdout
    assert "name\\x1b]0;PWNED\\x07.md" in done.stderr  # the log line names it, inert
    plain = scree(env, "search", "--notes", str(hostile), "-k", "5", "wombats")
    assert plain.returncode == 0, plain.stderr
    assert_inert(plain.stdout)
    assert "wombats \\x1b[2J wander \\x9b31m widely\\u200b" in plain.stdout
    as_json = scree(env, "search", "--notes", str(hostile), "--json", "-k", "5", "wombats")
    assert as_json.returncode == 0, as_json.stderr
    assert_inert(as_json.stdout)
    hits = {hit["path"]: hit for hit in json.loads(as_json.stdout)["hits"]}
    assert set(hits) == {"hostile.md", "plain.md"}
    assert hits["hostile.md"]["heading"] == "Head ]0;PWNED ing"  # stripped as the MCP attribute is (R-M1)
    assert CLEAR in hits["hostile.md"]["text"]  # the data itself is kept, escaped in the JSON text


def test_an_api_error_body_with_escapes_is_inert_in_reindex_status_and_search(
    tmp_path: Path, embed_server: EmbedServer
) -> None:
    folder = tmp_path / "notes"
    write_file(folder, "a.md", "# A\n\nwombats\n")
    env = api_env(tmp_path / "data", embed_server.url)
    reindex_here(env, folder)
    write_file(folder, "a.md", "# A\n\nwombats again\n")
    embed_server.set(fail_status=503, retry_after="0", error_message=f"upstream {TITLE}{CLEAR} broke {C1_CSI}")
    failed = scree(env, "reindex", "--notes", str(folder))
    assert failed.returncode == 1
    assert_inert(failed.stdout + failed.stderr)
    assert "\\x1b]0;PWNED\\x07" in failed.stderr
    for args in (("status",), ("status", "--json"), ("search", "wombats"), ("search", "--json", "wombats")):
        shown = (
            scree(env, *args, "--notes", str(folder))
            if args[0] == "status"
            else scree(env, "search", "--notes", str(folder), *args[1:])
        )
        assert shown.returncode == 0, shown.stderr
        assert_inert(shown.stdout)
        assert "PWNED" in shown.stdout, args


def test_inert_and_json_inert_keep_text_readable_and_json_equal() -> None:
    text = f"a{TITLE}b{CLEAR}\tc\n{C1_CSI}{BIDI}{ZERO_WIDTH}\ud800"
    shown = inert(text)
    assert_inert(shown)
    assert shown == "a\\x1b]0;PWNED\\x07b\\x1b[2J\tc\n\\x9b31m\\u202e\\u200b\\ud800"
    dumped = json.dumps({"t": text.replace("\ud800", "")}, ensure_ascii=False)
    assert_inert(json_inert(dumped))
    assert json.loads(json_inert(dumped)) == json.loads(dumped)


def test_hit_attributes_drop_bidi_overrides_and_zero_width_characters() -> None:
    assert attribute(f"docs/{BIDI}txt.md{ZERO_WIDTH}") == '"docs/txt.md"'
    assert attribute(f"A {TITLE} > B\u2066") == '"A ]0;PWNED > B"'


# --- item 15: twins never crowd out a reply ---


def test_thousands_of_identical_chunks_still_give_the_first_hit_with_also_capped(tmp_path: Path) -> None:
    """SQLite only: the test's second hit must outrank the twins, and PostgreSQL's English stop words ("same",
    "very", "other") make each twin shorter than it, so there the 400 twins fill the search's candidate pool."""
    folder = tmp_path / "notes"
    for i in range(400):
        write_file(folder, f"twins/t{i:04d}.md", "# Same\n\nthe very same paragraph about wombats\n")
    write_file(folder, "other.md", "# Other\n\nwombats elsewhere, differently\n")
    env = hash_env(tmp_path / "data")
    reindex_here(env, folder)
    done = scree(env, "search", "--notes", str(folder), "-k", "50", "--mode", "keyword", "wombats")
    assert done.returncode == 0, done.stderr
    assert '<hit n="1"' in done.stdout and '<hit n="2"' in done.stdout
    also = re.search(r'also="([^"]*)"', done.stdout)
    assert also is not None
    assert also.group(1).endswith(f", and {399 - ALSO_SHOWN} more")
    assert also.group(1).count("twins/") == ALSO_SHOWN


def test_a_reply_always_holds_its_first_hit() -> None:
    hit = Hit(path="a.md", start=1, end=2, heading="A", score=1.0, text="x" * 3000, stale=False, also=())
    reply = render_hits([hit, hit], notes=["[" + "n" * 70_000 + "]"])
    assert reply.startswith('<hit n="1" path="a.md"') and "[1 more hits omitted: output limit]" in reply


# --- item 18: a hit's path is what read_doc takes ---


ODD_NAMES = {
    'quote"d.md': False,
    "tab\there.md": False,
    "new\nline.md": False,
    "<hit x.md": False,
    "amp&ersand.md": True,
    "less<than.md": True,
    "sp ace.md": True,
}


def test_every_indexed_path_reads_back_exactly_and_odd_names_are_refused_with_a_reason(
    tmp_path: Path, index_backend: Backend
) -> None:
    folder = tmp_path / "notes"
    for name in ODD_NAMES:
        write_file(folder, name, f"# Odd\n\nquokkas in {name!r}\n")
    env = hash_env(tmp_path / "data", SCREE_LOG_LEVEL="warning", **index_backend.env())
    done = scree(env, "reindex", "--notes", str(folder))
    assert done.returncode == 0, done.stderr
    assert_inert(done.stdout)
    assert done.stdout.count("file name has a character a hit cannot show") == 4
    server = RawMcp(env, folder)
    try:
        server.initialize()
        server.call(1, "search_docs", {"query": "quokkas", "mode": "keyword", "k": 20})
        paths = re.findall(r'<hit n="\d+" path="([^"]*)"', text_of(server.reply(1)))
        assert sorted(paths) == sorted(name for name, kept in ODD_NAMES.items() if kept)
        for n, path in enumerate(paths, start=2):
            server.call(n, "read_doc", {"path": path})
            shown = text_of(server.reply(n))
            assert shown.startswith(f'<doc path="{path}"'), shown
    finally:
        server.close()

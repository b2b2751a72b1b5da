"""Ignore rules under load and against git (issue 13, items 12 and 16; R-I1): compiled once and re-read only when
an ignore file changes, and the same answers as `git check-ignore` on the patterns where pathspec differed."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest
from backends import Backend
from cli_helpers import reindex_here, write_file
from fault_helpers import RawMcp, hash_env, text_of

from scree.content.ignore import IgnorePolicy


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    write_file(root, "a.md", "# A\n\nalpha\n")
    write_file(root, "sub/b.md", "# B\n\nbeta\n")
    write_file(root, ".gitignore", "*.tmp\n")
    return root


# --- item 12: recompiled only when an ignore file changed ---


def test_refresh_recompiles_only_when_a_rule_source_changed(folder: Path) -> None:
    policy = IgnorePolicy(folder)
    assert policy("sub/b.md") is None
    assert policy.refresh() is False and policy.refresh() is False  # nothing changed: the compiled rules stay
    write_file(folder, ".gitignore", "*.tmp\nsub/\n")
    assert policy.refresh() is True
    assert policy("sub/b.md") == "gitignored by .gitignore"
    assert policy.refresh() is False
    write_file(folder, ".gitignore", "*.tmp\n")  # the same size as before the edit: the stat still differs
    assert policy.refresh() is True
    assert policy("sub/b.md") is None
    write_file(folder, "sub/.screeignore", "b.md\n")  # a new ignore file where none was: seen too
    assert policy.refresh() is True
    assert policy("sub/b.md") == "excluded by sub/.screeignore"
    (folder / "sub" / ".git").mkdir()  # a nested repository appears
    assert policy.refresh() is True
    assert policy("sub/b.md") == "inside nested repository sub/"
    (folder / ".git" / "info").mkdir(parents=True)
    assert policy.refresh() is True  # the root .git appeared: info/exclude may now apply
    assert policy("a.md") is None
    write_file(folder, ".git/info/exclude", "a.md\n")
    assert policy.refresh() is True
    assert policy("a.md") == "excluded by .git/info/exclude"


def test_read_doc_follows_a_gitignore_change_at_once(folder: Path, tmp_path: Path, index_backend: Backend) -> None:
    env = hash_env(tmp_path / "data", SCREE_LOG_LEVEL="warning", **index_backend.env())
    reindex_here(env, folder)
    server = RawMcp(env, folder)
    try:
        server.initialize()
        server.call(1, "read_doc", {"path": "sub/b.md"})
        assert text_of(server.reply(1)).startswith('<doc path="sub/b.md"')
        write_file(folder, ".gitignore", "*.tmp\nsub/\n")
        server.call(2, "read_doc", {"path": "sub/b.md"})
        assert text_of(server.reply(2)) == 'refused: "sub/b.md" is ignored by scree (gitignored by .gitignore)'
        (folder / ".gitignore").unlink()
        server.call(3, "read_doc", {"path": "sub/b.md"})
        assert text_of(server.reply(3)).startswith('<doc path="sub/b.md"')
    finally:
        server.close()


# --- item 16: git's answer wins, on generated patterns too ---

PATTERN_ALPHABET = ["a", "b", "c", "é", "*", "**", "?", "[", "]", "!", "^", "-", "/", "\\", ":", " ", ".", "#", "x"]
PATTERN_TOKENS = ["[[:alpha:]]", "[[:digit:]]", "[[:space:]]", "[[:punct:]]", "[[:bogus:]]", "[a-c]", "[c-a]", "[!a]"]
FILE_NAMES = [
    "a",
    "b",
    "ab",
    "ba",
    "c",
    "é",
    "aé",
    "1",
    "a1",
    "x.md",
    "a b",
    " a",
    "a ",
    "#a",
    "!a",
    "[a]",
    "a-b",
    "^",
    ":",
    "a\\b",
    "**",
    "a*",
]
DIR_NAMES = ["aa", "bb", "éé", "d", "a b c"]


def random_pattern(rng: random.Random) -> str:
    parts = [
        rng.choice(PATTERN_TOKENS) if rng.random() < 0.2 else rng.choice(PATTERN_ALPHABET)
        for _ in range(rng.randint(1, 6))
    ]
    return "".join(parts)


def git_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(home), GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_SYSTEM=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return env


@pytest.mark.parametrize("seed", range(4))  # 40 seeds (2,400 patterns) matched git when this was written
def test_generated_patterns_answer_as_git_check_ignore(tmp_path: Path, seed: int) -> None:
    """Each generated pattern alone in its own folder's .gitignore, over the same small tree of odd names."""
    rng = random.Random(seed)
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=git_env(tmp_path), timeout=30)
    paths: list[tuple[str, bool]] = []
    patterns = {f"p{i}": random_pattern(rng) for i in range(60)}
    for folder, pattern in patterns.items():
        (root / folder).mkdir()
        (root / folder / ".gitignore").write_bytes(pattern.encode() + b"\n")
        for d in [""] + DIR_NAMES:
            if d:
                (root / folder / d).mkdir()
                paths.append((f"{folder}/{d}", True))
            for name in FILE_NAMES:
                rel = f"{folder}/{d}/{name}" if d else f"{folder}/{name}"
                (root / rel).write_bytes(b"x\n")
                paths.append((rel, False))
    stdin = b"".join(os.fsencode(p) + b"\0" for p, _ in paths)
    out = subprocess.run(
        ["git", "check-ignore", "--no-index", "-v", "-n", "-z", "--stdin"],
        cwd=root,
        input=stdin,
        capture_output=True,
        env=git_env(tmp_path),
        timeout=60,
        check=False,
    ).stdout.split(b"\0")[:-1]
    git = {os.fsdecode(out[i + 3]): bool(out[i]) and not out[i + 2].startswith(b"!") for i in range(0, len(out), 4)}
    policy = IgnorePolicy(root, extensions=("",))  # every name counts as markdown: only the rules decide
    mismatches = []
    for rel, is_dir in paths:
        ours = policy(rel, is_dir) is not None
        if ours != git[rel]:
            mismatches.append((patterns[rel.split("/")[0]], rel, git[rel]))
    assert not mismatches, mismatches[:20]

"""The files a folder's git repository tracks (R-I1): git never ignores a tracked file, whatever `.gitignore` says
(`git check-ignore` reports none), so the ignore policy exempts them. vuejs/pinia commits its generated English API
pages under a folder its `.gitignore` names.

Read with `git ls-files` once a gitignore rule first matters; where there is no repository, no git, or git fails,
nothing counts as tracked and the rules apply as written (what was indexed before stays the same).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from scree.logs import get_logger

log = get_logger(__name__)

GIT_TIMEOUT_S = 30.0  # a bound for a huge repository on a slow disk; past it the rules apply as written
_GIT_ENVIRONMENT = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")  # a caller's settings must not pick another repo


@dataclass(frozen=True, slots=True)
class Tracked:
    """Tracked paths relative to the folder ('/'-separated), and every folder above one."""

    files: frozenset[str] = frozenset()
    folders: frozenset[str] = frozenset()

    @classmethod
    def of(cls, paths: list[str]) -> Tracked:
        folders: set[str] = set()
        for path in paths:
            folder = path.rpartition("/")[0]
            while folder and folder not in folders:
                folders.add(folder)
                folder = folder.rpartition("/")[0]
        return cls(frozenset(paths), frozenset(folders))

    def holds(self, rel: str) -> bool:
        return rel in self.files

    def holds_below(self, rel_dir: str) -> bool:
        return rel_dir in self.folders


def index_path(root: Path) -> Path | None:
    """The repository's index file for a folder that is a work tree's top (`.git` a folder, or a file naming the
    git dir: worktrees, submodules); None for a folder that is no repository's top."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git / "index"
    try:
        text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    return (root / text.removeprefix("gitdir:").strip()).resolve() / "index"


def tracked_files(root: Path) -> Tracked:
    """What `git ls-files` lists for the folder; empty where git is missing or fails (logged once, never raised)."""
    environment = {key: value for key, value in os.environ.items() if key not in _GIT_ENVIRONMENT}
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached"],
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
            env=environment,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.info("tracked files not read: gitignore rules apply to every file", why=type(exc).__name__)
        return Tracked()
    if done.returncode != 0:
        log.info("tracked files not read: gitignore rules apply to every file", code=done.returncode)
        return Tracked()
    names = [os.fsdecode(name) for name in done.stdout.split(b"\0") if name]
    return Tracked.of(names)

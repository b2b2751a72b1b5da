"""Where things live: the folder to index (R-F1), a path given inside it, the data and config homes, private modes
(the index folder itself is scree.index.folder)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import BinaryIO

from scree import replies
from scree.errors import PathRefusedError

DIR_MODE = 0o700
FILE_MODE = 0o600


def git_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` that holds `.git` (a directory, or a file for worktrees)."""
    here = start.resolve()
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


# Why a folder was chosen (R-F1), as `scree config` shows it; FROM_CWD_NO_REPO is said on stderr by every command.
FROM_PROJECT_DIR = "the git root above CLAUDE_PROJECT_DIR"
FROM_PROJECT_DIR_NO_REPO = "CLAUDE_PROJECT_DIR, which is in no git repository"
FROM_NOTES = "--notes"
FROM_CWD_REPO = "the git root of the current directory"
FROM_CWD_NO_REPO = "the current directory, which is in no git repository"


def choose_folder(env: Mapping[str, str], notes: str | None, cwd: Path | None = None) -> tuple[Path, str]:
    """R-F1: git root above CLAUDE_PROJECT_DIR, else --notes, else the git root of cwd (cwd when in no repo); with
    which of these it was (one of the FROM_* phrases)."""
    project_dir = env.get("CLAUDE_PROJECT_DIR")
    if project_dir:
        start = Path(project_dir).expanduser()
        root = git_root(start)
        return (root, FROM_PROJECT_DIR) if root else (start.resolve(), FROM_PROJECT_DIR_NO_REPO)
    if notes:
        return Path(notes).expanduser().resolve(), FROM_NOTES
    here = (cwd or Path.cwd()).resolve()
    root = git_root(here)
    return (root, FROM_CWD_REPO) if root else (here, FROM_CWD_NO_REPO)


def data_home(env: Mapping[str, str]) -> Path:
    """$XDG_DATA_HOME/scree, defaulting to ~/.local/share/scree."""
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "scree"


def config_home(env: Mapping[str, str]) -> Path:
    """$XDG_CONFIG_HOME/scree, defaulting to ~/.config/scree."""
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "scree"


def ensure_private_dir(path: Path) -> None:
    """Create `path` and any missing parents with mode 0700 (whatever the umask: with umask 000, mkdir's parents
    came out 0777, issue 13); tighten an existing leaf we own. Existing parents are left as they are."""
    missing: list[Path] = []
    probe = path
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            pass  # made meanwhile by another scree process
        os.chmod(folder, DIR_MODE)
    if path.stat().st_mode & 0o777 != DIR_MODE:  # no chmod when private already: on a read-only mount it fails
        os.chmod(path, DIR_MODE)


def replace_whole(target: Path, write: Callable[[BinaryIO], object], mode: int | None = None) -> None:
    """Replace `target` in one step: `write` fills a temporary file beside it (given `mode`, whatever the umask),
    which is then renamed over it, so a reader sees the old file or the new one, never half; on any failure the
    temporary file goes and the error is raised."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            if mode is not None:
                os.chmod(tmp, mode)
            write(handle)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def path_in_folder(folder: Path, cwd: Path, raw: str) -> str | None:
    """A path typed on the command line as the folder-relative posix path scree uses (`reindex PATH`).

    Relative paths are taken from the current directory when it is inside the folder (as git takes them), else
    from the folder itself; an absolute path must lie inside the folder (through symlinked parents too). None
    means the folder itself; a NUL byte is left for the caller's refusal.
    """
    if "\x00" in raw:
        return raw
    root = folder.resolve()
    here = cwd.resolve()
    base = here if here == root or root in here.parents else root
    candidate = Path(os.path.normpath(base / Path(raw).expanduser()))
    for attempt in (candidate, candidate.parent.resolve() / candidate.name):
        if attempt == root:
            return None
        if root in attempt.parents:
            return attempt.relative_to(root).as_posix()
    raise PathRefusedError(f'refused: "{raw}" is not inside {root}, the folder scree indexes')


def normalise_rel_path(ignored: Callable[[str], str | None], raw: str) -> str:
    """A user-given path as the relative posix path scree uses; refuses absolute paths, `..` escapes and NUL bytes,
    and paths the ignore rules (`ignored`: path -> reason or None) keep out (R-M6)."""
    if "\x00" in raw:
        raise PathRefusedError(replies.NUL_BYTE_REFUSAL)
    text = raw.replace("\\", "/").strip()
    if text.startswith("/"):
        raise PathRefusedError(replies.absolute_path_refusal(raw))
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise PathRefusedError(replies.outside_refusal(raw))
    rel = "/".join(parts)
    reason = ignored(rel)
    if reason is not None:
        raise PathRefusedError(replies.ignored_refusal(rel, reason))
    return rel


def owned_by_another(info: os.stat_result) -> str | None:
    """Issue 34: why a file scree reads a secret from (a token, the settings file) must be refused because another
    user owns it, and so can read or replace it; None when it is this user's (or the platform has no owners)."""
    if not hasattr(os, "geteuid") or info.st_uid == os.geteuid():
        return None
    return f"it is owned by another user (uid {info.st_uid}), who can read or replace it"

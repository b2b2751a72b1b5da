"""The ways scree is installed, each from a clean copy of the source tree: `python -m build` (wheel and sdist), then
`pip install .` in a venv, the wheel and the sdist, `pipx install .` and `uv tool install .`; every one gives a
`scree --version` that prints the package's version, and the wheel holds the `scree` package only.

Dependencies come from a wheelhouse built once from the wheel (`pip wheel`), so the installs are local; what each
tool does with the source folder or archive is the real path a user takes. The whole module takes two to three
minutes on two cores; it is part of every whole-suite run, as CI runs it."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

import pytest
from test_shared_model import model  # noqa: F401 - the fixture: the machine's model, else the suite's

import scree

pytestmark = pytest.mark.packaging  # the packaging tier: `pytest -m "not packaging"` leaves it out

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
INSTALL_TIMEOUT_S = 300
VERSION_LINE = f"scree {scree.__version__}"


def _run(command: Sequence[str | Path], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    argv = [str(part) for part in command]
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
    assert done.returncode == 0, f"{command}: {done.stdout}{done.stderr}"
    return str(done.stdout)


def clean_copy(into: Path) -> Path:
    """The files git tracks or would track (what a fresh clone holds, plus uncommitted edits), nothing built."""
    listed = _run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT)
    for rel in filter(None, listed.split("\0")):
        source = ROOT / rel
        if source.is_file():
            (into / rel).parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileNotFoundError):  # gone since listed: another process's scratch file
                shutil.copy2(source, into / rel)
    return into


class Built:
    def __init__(self, root: Path) -> None:
        self.source = clean_copy(root / "src")
        dist = root / "dist"
        _run([sys.executable, "-m", "build", "--outdir", dist, self.source])
        (self.wheel,) = dist.glob("scree-*.whl")
        (self.sdist,) = dist.glob("scree-*.tar.gz")
        self.wheelhouse = root / "wheelhouse"  # the dependencies, and what building from source needs
        _run([sys.executable, "-m", "pip", "wheel", "-q", "-w", self.wheelhouse, self.wheel])
        _run([sys.executable, "-m", "pip", "download", "-q", "-d", self.wheelhouse, "setuptools>=68", "wheel"])
        self.local = ["--no-index", "--find-links", str(self.wheelhouse)]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return Built(tmp_path_factory.mktemp("install"))


def _scree_version(program: Path) -> None:
    assert _run([program, "--version"]).strip() == VERSION_LINE


@pytest.mark.slow
def test_wheel_holds_only_the_scree_package_and_the_sdist_the_whole_project(built: Built) -> None:
    with zipfile.ZipFile(built.wheel) as wheel:
        tops = {name.split("/", 1)[0] for name in wheel.namelist()}
        assert "scree/benchmarks/suite.py" in wheel.namelist()  # what `scree bench` runs
    assert tops == {"scree", f"scree-{scree.__version__}.dist-info"}
    with tarfile.open(built.sdist) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    for needed in (
        "CHANGELOG.md",
        "Dockerfile",
        "contrib/systemd/scree-watch@.service",
        "contrib/systemd/user/scree-watch@.service",
        "contrib/container/smoke",
        "tests/conftest.py",
        "bench/quality.py",
    ):
        assert needed in names, needed


@pytest.mark.slow
@pytest.mark.parametrize("what", ["source folder", "wheel", "sdist"])
def test_pip_install_in_a_venv(built: Built, tmp_path: Path, what: str) -> None:
    target = {"source folder": built.source, "wheel": built.wheel, "sdist": built.sdist}[what]
    _run([sys.executable, "-m", "venv", tmp_path / "venv"])
    _run([tmp_path / "venv" / "bin" / "pip", "install", "-q", "--no-compile", *built.local, target])
    _scree_version(tmp_path / "venv" / "bin" / "scree")
    python = tmp_path / "venv" / "bin" / "python"
    assert _run([python, "-m", "scree", "--version"], cwd=tmp_path).strip() == VERSION_LINE
    # scree bench runs from the install: its parts import from the scree package, and no `bench` was installed
    _run([python, "-c", "import scree.benchmarks.suite"], cwd=tmp_path)
    _run([python, "-m", "scree.benchmarks.embed_local", "--help"], cwd=tmp_path)
    stray = subprocess.run([python, "-c", "import bench"], cwd=tmp_path, capture_output=True, text=True)
    assert "No module named 'bench'" in stray.stderr


@pytest.mark.slow
def test_pipx_install(built: Built, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PIPX_HOME": str(tmp_path / "pipx"),
        "PIPX_BIN_DIR": str(tmp_path / "bin"),
        "PIPX_MAN_DIR": str(tmp_path / "man"),
    }
    pip_args = " ".join(["--no-compile", *built.local])
    _run([BIN / "pipx", "install", f"--pip-args={pip_args}", built.source], env=env)
    _scree_version(tmp_path / "bin" / "scree")
    assert (tmp_path / "bin" / "scree-mcp").exists()


@pytest.mark.slow
def test_uv_tool_install(built: Built, tmp_path: Path) -> None:
    env = {**os.environ, "UV_TOOL_DIR": str(tmp_path / "tools"), "UV_TOOL_BIN_DIR": str(tmp_path / "bin")}
    _run([BIN / "uv", "tool", "install", *built.local, built.source], env=env)
    _scree_version(tmp_path / "bin" / "scree")
    assert (tmp_path / "bin" / "scree-mcp").exists()


def readme_commands() -> list[str]:
    """The README's two commands (its first two ```sh blocks), in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [block.split("```", 1)[0].strip() for block in text.split("```sh\n")[1:3]]
    assert len(blocks) == 2 and all(block.startswith("python3 -m venv .venv") for block in blocks), blocks
    return blocks


def package_files(venv: Path) -> set[Path]:
    """Every file inside the installed `scree` package folder of `venv` (none under an editable install)."""
    (site,) = venv.glob("lib/python*/site-packages")
    return {path for path in (site / "scree").rglob("*") if path.is_file()}


@pytest.mark.slow
@pytest.mark.timeout(3 * INSTALL_TIMEOUT_S)  # two installs and a reindex with the offline model, on a busy machine
def test_the_readme_commands_in_order_in_one_clone(built: Built, tmp_path: Path, model: Path) -> None:  # noqa: F811
    """Issue 34 item 0: command 1 (pip install ., model install, reindex, search) then command 2 (pip install -e
    '.[test]') in the same fresh clone, then `scree --version` and a search. Nothing command 1 ran may have written
    inside the installed package: a file left there outlives the uninstall and shadows the editable install. The
    dependencies come from the wheelhouse (the test extras from the package index, as a user's pip would fetch
    them), the offline model is the suite's (so `scree model install` finds it in place), and command 2 stops before
    the suite itself, which is what this suite is."""
    first, second = readme_commands()
    suite = " && .venv/bin/python -m pytest"
    assert second.endswith(suite)
    local = f"pip install -q --find-links {built.wheelhouse}"
    first = first.replace("pip install -q", f"{local} --no-index")
    second = second.removesuffix(suite).replace("pip install -q", local)
    clone = clean_copy(tmp_path / "clone")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCREE_", "OPENROUTER_", "NUMBA_", "VIRTUAL_ENV"))}
    env.update(
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        SCREE_LOCAL_MODEL_DIR=str(model),
    )
    _run(["sh", "-c", first], cwd=clone, env=env)
    venv = clone / ".venv"
    installed_by_pip = {Path(line.split(",", 1)[0]) for line in _record(venv)}
    written = {path for path in package_files(venv) if _site_relative(venv, path) not in installed_by_pip}
    assert not written, f"written inside the installed package at run time: {sorted(map(str, written))[:5]}"
    _run(["sh", "-c", second], cwd=clone, env=env)
    _scree_version(venv / "bin" / "scree")
    found = _run([venv / "bin" / "scree", "search", "--notes", ".", "-k", "1", "what does a hit's score mean"],
                 cwd=clone, env=env)  # fmt: skip
    assert "README.md" in found or "docs/" in found, found


def _record(venv: Path) -> list[str]:
    (site,) = venv.glob("lib/python*/site-packages")
    (record,) = site.glob("scree-*.dist-info/RECORD")
    return record.read_text(encoding="utf-8").splitlines()


def _site_relative(venv: Path, path: Path) -> Path:
    (site,) = venv.glob("lib/python*/site-packages")
    return path.relative_to(site)

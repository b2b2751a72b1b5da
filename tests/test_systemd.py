"""contrib/systemd/ (R-P6): both unit templates pass `systemd-analyze verify`, and each one's ExecStart line, with
its specifiers expanded as systemd expands them, runs `scree watch`: it syncs, stops on the unit's KillSignal with
exit 0, and exits non-zero when its folder goes away (R-W4), which is what Restart=on-failure restarts."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import wait_until, write_file

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
UNITS = {
    "system": ROOT / "contrib" / "systemd" / "scree-watch@.service",
    "user": ROOT / "contrib" / "systemd" / "user" / "scree-watch@.service",
}
INSTANCE = "srv-notes"  # systemd-escape --path /srv/notes
DEADLINE_S = 30.0
STOP_BAR_S = 5.0  # R-W5; the units' TimeoutStopSec leaves watch more than this
HARDENING = ("NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes", "Restart=on-failure")


def service_settings(unit: Path) -> dict[str, list[str]]:
    """The [Service] section's settings, each key with its values in order (systemd allows a key many times)."""
    section = ""
    out: dict[str, list[str]] = {}
    for raw in unit.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line
        elif section == "[Service]":
            key, _, value = line.partition("=")
            out.setdefault(key, []).append(value)
    return out


def systemd_escape_path(path: Path) -> str:
    """`systemd-escape --path`: '/' becomes '-', and anything but [A-Za-z0-9:_.] (and a leading '.') becomes \\xNN."""
    text = str(path).strip("/")
    out = []
    for n, char in enumerate(text):
        if char == "/":
            out.append("-")
        elif (char.isascii() and (char.isalnum() or char in ":_.")) and not (n == 0 and char == "."):
            out.append(char)
        else:
            out.extend(f"\\x{byte:02x}" for byte in char.encode())
    return "".join(out)


def expand(value: str, folder: Path, home: Path) -> str:
    """The specifiers the units use, as systemd expands them for the instance naming `folder`."""
    expanded = value.replace("%f", str(folder)).replace("%h", str(home)).replace("%i", systemd_escape_path(folder))
    assert "%" not in expanded, f"a specifier this test does not expand: {value}"
    return expanded


def home_with_scree(tmp_path: Path) -> Path:
    """A home whose ~/.local/bin/scree is this environment's scree, where pipx and uv tool put theirs."""
    home = tmp_path / "home"
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "scree").symlink_to(BIN / "scree")
    return home


@pytest.mark.parametrize("kind", sorted(UNITS))
def test_unit_is_hardened_and_restarts_on_failure(kind: str) -> None:
    text = UNITS[kind].read_text(encoding="utf-8")
    for line in HARDENING:
        assert f"\n{line}\n" in text, line
    settings = service_settings(UNITS[kind])
    assert settings["ReadWritePaths"], "the index folder must be writable under ProtectSystem=strict"
    assert settings["ExecStart"][0].split()[-3:] == ["watch", "--notes", "%f"]


@pytest.mark.parametrize("kind", sorted(UNITS))
def test_systemd_analyze_verify_passes(kind: str, tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed here: contrib/systemd/ units are NOT verified by this run")
    env = {**os.environ, "HOME": str(home_with_scree(tmp_path)), "SYSTEMD_LOG_COLOR": "0"}
    command = [analyze, "verify", f"./scree-watch@{INSTANCE}.service"]
    if kind == "user":
        (tmp_path / "run").mkdir(mode=0o700)
        env["XDG_RUNTIME_DIR"] = str(tmp_path / "run")  # the user manager's runtime folder verify sets up
        command.insert(1, "--user")
    done = subprocess.run(command, cwd=UNITS[kind].parent, env=env, capture_output=True, text=True, timeout=60)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "scree-watch" not in output, output  # no warning about our unit either


def _status(env: dict[str, str], folder: Path) -> dict[str, object]:
    done = subprocess.run(
        [str(BIN / "scree"), "status", "--json", "--notes", str(folder)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    status: dict[str, object] = json.loads(done.stdout)
    return status


def _start(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as stderr:
        return subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr)


def _watching(log: Path) -> bool:
    """watch's own "watching" record (SCREE_LOG_FORMAT=json, as the units set it): the first sync is behind it."""
    return any(json.loads(line).get("event") == "watching" for line in log.read_text().splitlines() if line[:1] == "{")


@pytest.mark.parametrize("kind", sorted(UNITS))
def test_exec_start_runs_as_written(kind: str, tmp_path: Path) -> None:
    folder = tmp_path / "my notes"  # a space: %f is one argument, as systemd passes it
    write_file(folder, "a.md", "# Alpha\n\napples and apricots\n")
    home = home_with_scree(tmp_path)
    settings = service_settings(UNITS[kind])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCREE_", "OPENROUTER_", "CLAUDE_", "XDG_"))}
    env.update(HOME=str(home), PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}")  # systemd's PATH finds scree
    for line in settings.get("Environment", []):
        env.update(pair.split("=", 1) for pair in shlex.split(line))
    if kind == "system":
        env["XDG_DATA_HOME"] = str(tmp_path / "var-lib")  # as a drop-in would: the test writes nothing in /var/lib
    env.update(SCREE_EMBEDDER="hash", SCREE_HEALTH_SECONDS="0.3", SCREE_DEBOUNCE_SECONDS="0.2")
    (exec_start,) = settings["ExecStart"]
    argv = [expand(arg, folder, home) for arg in shlex.split(exec_start)]
    kill_signal = getattr(signal, settings["KillSignal"][0])

    log = tmp_path / "watch.log"
    watch = _start(argv, env, log)
    try:
        wait_until(lambda: watch.poll() is not None or _watching(log), "watching after the first sync", 60)
        assert watch.poll() is None, log.read_text()
        assert _status(env, folder)["files"] == 1
        watch.send_signal(kill_signal)
        assert watch.wait(STOP_BAR_S) == 0
        assert _status(env, folder)["writer_pid"] is None

        watch = _start(argv, env, log)  # a health failure: the folder goes away
        wait_until(lambda: watch.poll() is not None or _watching(log), "watching again", DEADLINE_S)
        shutil.rmtree(folder)
        assert watch.wait(DEADLINE_S) == 1, log.read_text()  # non-zero: Restart=on-failure starts it again
        last = log.read_text().splitlines()[-1]  # a one-line reason: the health check's, or the sync's if first
        assert last in (
            f"scree: the folder {folder} was removed or moved away",
            f"scree: the folder {folder} does not exist",
        )
    finally:
        if watch.poll() is None:
            watch.kill()
        watch.wait(DEADLINE_S)

"""Shell completion (argcomplete): `scree completion SHELL` prints a script, and a real bash completes with it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import run_scree, scree_env

BIN = str(Path(sys.executable).parent)
COMPLETE_IN_BASH = """
source <(scree completion bash)
for line in "$@"; do
    COMP_LINE="$line"; COMP_POINT=${#COMP_LINE}
    read -ra COMP_WORDS <<< "$line"; [[ "$line" == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _python_argcomplete scree
    echo "${COMPREPLY[*]}"
done
"""


def test_bash_completes_commands_actions_flags_and_choices(tmp_path: Path) -> None:
    bash = shutil.which("bash")
    assert bash is not None
    env = {**scree_env(tmp_path / "data"), "PATH": BIN + os.pathsep + os.environ.get("PATH", "")}
    lines = ["scree ser", "scree index ", "scree search --mo", "scree search --mode ", "scree completion "]
    done = subprocess.run(
        [bash, "-c", COMPLETE_IN_BASH, "complete", *lines], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    got = [line.split() for line in done.stdout.splitlines()]
    assert got == [
        ["serve"],
        ["-h", "--help", "list", "remove"],
        ["--mode"],
        ["hybrid", "semantic", "keyword"],
        ["-h", "--help", "bash", "zsh", "fish"],
    ]


@pytest.mark.parametrize(("shell", "marker"), [("zsh", "#compdef scree"), ("fish", "complete --command scree")])
def test_zsh_and_fish_scripts(tmp_path: Path, shell: str, marker: str) -> None:
    proc = run_scree("completion", shell, env=scree_env(tmp_path / "data"))
    assert proc.returncode == 0 and marker in proc.stdout
    program = shutil.which(shell)
    if program is not None:  # where the shell is installed, its parser accepts the script
        script = tmp_path / f"scree.{shell}"
        script.write_text(proc.stdout)
        check = [program, "-n", str(script)] if shell == "zsh" else [program, "--no-execute", str(script)]
        assert subprocess.run(check, capture_output=True, timeout=60).returncode == 0


def test_an_unknown_shell_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_scree("completion", "csh", env=scree_env(tmp_path / "data"))
    assert proc.returncode == 2 and "invalid choice: 'csh'" in proc.stderr

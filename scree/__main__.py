"""`python -m scree`, and what the `scree` and `scree-mcp` commands run: scree.cli is imported only when a command
runs. A spawned writer child runs its parent's main script again (as `__mp_main__`, multiprocessing's spawn), so
with the commands pointing here it imports nothing through it: no argparse, no CLI (0.4 MB of the writer's USS)."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """`scree ARGS...`: the arguments after the command's name (sys.argv's when None); the exit code."""
    from scree.cli import main as cli_main

    return cli_main(argv)


def mcp_main() -> int:
    from scree.cli import mcp_main as cli_mcp_main

    return cli_mcp_main()


if __name__ == "__main__":
    sys.exit(main())

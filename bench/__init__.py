"""Benchmarks and quality evaluation, each runnable from the repository's root as `python -m bench.NAME`; results go
to bench/results/. The parts `scree bench` runs live in scree.benchmarks (they ship in the wheel); this package is
not installed."""

import argparse

from scree.search import MODES, SearchMode


def modes_arg(text: str) -> list[SearchMode]:
    """--modes: some of scree.search.MODES, comma-separated (the default: all of them, in their order)."""
    asked = [part.strip() for part in text.split(",") if part.strip()]
    modes = [mode for name in asked for mode in MODES if mode == name]
    if not asked or len(modes) != len(asked):
        raise argparse.ArgumentTypeError(f"{text!r}: choose from {', '.join(MODES)}, comma-separated")
    return modes


def add_modes_option(parser: argparse.ArgumentParser) -> None:
    """The --modes option every quality benchmark takes."""
    parser.add_argument("--modes", type=modes_arg, default=",".join(MODES), help=f"default: {','.join(MODES)}")

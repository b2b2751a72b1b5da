"""Benchmarks and quality evaluation, each runnable from the repository's root as `python -m bench.NAME`; results go
to bench/results/. The parts `scree bench` runs live in scree.benchmarks (they ship in the wheel); this package is
not installed."""

"""Benchmarks and quality evaluation, each runnable as `python -m bench.NAME`; results go to bench/results/."""

"""The search engine (R-M2..R-M4, R-M10): engine.py runs a query over the store, ranking.py makes every fusion and
ranking decision, scope.py reads the `path` argument, hits.py folds twins and translations, render.py writes the
exact reply text. The tool's argument bounds are here, where the reader can read them without loading the
engine."""

MODES = ("hybrid", "semantic", "keyword")  # SPEC §8: search_docs' `mode`, the default first
DEFAULT_K = 8  # SPEC §8
MAX_K = 50  # SPEC §8

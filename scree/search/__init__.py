"""The search engine (R-M2..R-M4, R-M10): engine.py runs a query over the store and orchestrates, query.py
analyses the query once per search, ranking.py makes every fusion and ranking decision, scope.py reads the `path`
argument, hits.py holds the hit records and folds twins and translations, render.py writes the exact reply text.
The tool's argument bounds are here, where the reader can read them without loading the engine, and each is spelled
only here: the CLI's flags, the MCP tool's schema and the engine read them."""

from typing import Literal, get_args

SearchMode = Literal["hybrid", "semantic", "keyword"]  # SPEC §8: search_docs' `mode`, the default first
MODES: tuple[SearchMode, ...] = get_args(SearchMode)
DEFAULT_MODE: SearchMode = MODES[0]
DEFAULT_K = 8  # SPEC §8
MAX_K = 50  # SPEC §8
MAX_PATH_CHARS = 4096  # PATH_MAX on Linux: the longest `path` argument (a file, or a search's scope)

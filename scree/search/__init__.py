"""The search engine (R-M2..R-M4, R-M10): engine.py runs a query over the store, ranking.py makes every fusion and
ranking decision, scope.py reads the `path` argument, hits.py folds twins and translations, render.py writes the
exact reply text."""

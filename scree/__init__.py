"""scree: search a repository's docs by meaning, for coding agents over MCP.

The folders are the processes (reader_proc/, writer_proc/, supervisor.py for `scree serve`), store/ and embedders/ the
I/O below them; README.md's Development section lists every module's job and the path one query and one edit take.
"""

__version__ = "0.1.0"

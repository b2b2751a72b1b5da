"""scree: search a repository's docs by meaning, for coding agents over MCP.

The folders are the processes (reader_proc/, writer_proc/, supervisor.py for `scree serve`), store/ and embedders/ the
I/O below them; README.md's Development section lists every module's job and the path one query and one edit take.
"""

import os as _os

__version__ = "0.1.0"

# Nothing scree writes at run time lands inside its installed package (issue 34): a file left there outlives
# `pip uninstall`, and the folder it keeps becomes a namespace package that shadows the next (editable) install.
# Libraries that cache beside their own code are pointed at the user's cache folder here, before any of them is
# imported, and spawned writers inherit it: numba's compiled kernels go to $XDG_CACHE_HOME/scree/numba.
_CACHE_HOME = _os.environ.get("XDG_CACHE_HOME") or _os.path.join(_os.path.expanduser("~"), ".cache")
_os.environ.setdefault("NUMBA_CACHE_DIR", _os.path.join(_CACHE_HOME, "scree", "numba"))

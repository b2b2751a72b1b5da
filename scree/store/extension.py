"""Where sqlite-vec's loadable extension lies, found without importing the `sqlite_vec` package.

Importing it runs its __init__, which imports numpy (when installed) and stdlib sqlite3: 13 MB of RSS in a writer
that needs neither (R-P3, writer idle bar). The package is only a holder of the `vec0` shared library.
"""

from __future__ import annotations

import importlib.util
import os

from scree.errors import IndexCorruptError


def vec0_path() -> str:
    """The path to give SQLite's load_extension (it adds the platform's suffix itself)."""
    spec = importlib.util.find_spec("sqlite_vec")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise IndexCorruptError("sqlite-vec is not installed: reinstall scree (pip install scree)")
    return os.path.normpath(os.path.join(locations[0], "vec0"))

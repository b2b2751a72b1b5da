"""The measurements behind `scree bench` (R-L3), shipped in the wheel; bench/ in a checkout runs each one alone.

`python -m bench.NAME` (from the repository's root) runs the module of that name here; figures written without a
--json path go to bench/results/ under the current directory.
"""

from pathlib import Path

RESULTS = Path("bench") / "results"

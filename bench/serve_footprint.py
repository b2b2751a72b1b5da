"""`python -m bench.serve_footprint`: scree.benchmarks.serve_footprint (in the wheel, as `scree bench` runs it)."""

import sys

from scree.benchmarks.serve_footprint import main

if __name__ == "__main__":
    sys.exit(main())

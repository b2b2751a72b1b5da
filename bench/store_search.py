"""`python -m bench.store_search`: scree.benchmarks.store_search (in the wheel, as `scree bench` runs it)."""

import sys

from scree.benchmarks.store_search import main

if __name__ == "__main__":
    sys.exit(main())

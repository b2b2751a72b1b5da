"""`python -m bench.search_latency`: scree.benchmarks.search_latency (in the wheel, as `scree bench` runs it)."""

import sys

from scree.benchmarks.search_latency import main

if __name__ == "__main__":
    sys.exit(main())

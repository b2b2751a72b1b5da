"""`python -m bench.edit_latency`: scree.benchmarks.edit_latency (in the wheel, as `scree bench` runs it)."""

import sys

from scree.benchmarks.edit_latency import main

if __name__ == "__main__":
    sys.exit(main())

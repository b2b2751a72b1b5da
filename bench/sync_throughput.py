"""`python -m bench.sync_throughput`: scree.benchmarks.sync_throughput (in the wheel, as `scree bench` runs it)."""

import sys

from scree.benchmarks.sync_throughput import main

if __name__ == "__main__":
    sys.exit(main())

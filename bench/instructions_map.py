"""`python -m bench.instructions_map`: scree.benchmarks.instructions_map (in the wheel, as `scree bench` runs it)."""

import sys

from scree.benchmarks.instructions_map import main

if __name__ == "__main__":
    sys.exit(main())

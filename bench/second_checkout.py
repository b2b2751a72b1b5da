"""`python -m bench.second_checkout`: scree.benchmarks.second_checkout (in the wheel, as `scree bench` runs it)."""

import sys

from scree.benchmarks.second_checkout import main

if __name__ == "__main__":
    sys.exit(main())

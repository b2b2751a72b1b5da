"""`python -m bench.writer_idle`: scree.benchmarks.writer_idle (in the wheel, as `scree bench` runs it)."""

import sys

from scree.benchmarks.writer_idle import main

if __name__ == "__main__":
    sys.exit(main())

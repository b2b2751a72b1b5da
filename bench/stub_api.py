"""`python -m bench.stub_api`: scree.benchmarks.stub_api (in the wheel, as `scree bench` runs it)."""

import sys

from scree.benchmarks.stub_api import main

if __name__ == "__main__":
    sys.exit(main())

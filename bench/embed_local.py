"""`python -m bench.embed_local`: scree.benchmarks.embed_local (in the wheel, as `scree bench` runs it)."""

import sys

from scree.benchmarks.embed_local import main

if __name__ == "__main__":
    sys.exit(main())

"""`python -m bench.bare_mcp_server`: scree.benchmarks.bare_mcp_server (in the wheel, as `scree bench` runs it)."""

import sys

from scree.benchmarks.bare_mcp_server import main

if __name__ == "__main__":
    sys.exit(main())

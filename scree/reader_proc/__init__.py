"""The MCP reader of `scree serve` (server.py: the MCP surface; tools.py: what the tools do; control.py: interim)."""

"""scree: search a repository's markdown by meaning, for coding agents over MCP."""

__version__ = "0.1.0"

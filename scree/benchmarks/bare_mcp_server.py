"""A bare MCP SDK stdio server with one trivial tool: the baseline bench.serve_footprint sets scree's reader beside.

Run: python -m bench.bare_mcp_server (speaks MCP on stdin/stdout until stdin closes).
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer


def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


def main() -> None:
    server: MCPServer = MCPServer(name="bare", instructions="A bare server with one tool, for benchmarks.")
    server.add_tool(echo, description="Return the text unchanged.", structured_output=False)
    server.run("stdio")


if __name__ == "__main__":
    main()

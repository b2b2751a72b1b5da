"""The MCP reader of `scree serve`: server.py (the MCP surface and the stdio run) and tools.py (what the tools do,
over Settings and a WriterControl); it imports nothing of the CLI layer or of the writer."""

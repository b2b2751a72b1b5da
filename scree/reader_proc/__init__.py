"""The MCP reader of `scree serve`: server.py (the MCP surface and the stdio run), tools.py (what the tools do, over
Settings and a WriterControl), http.py with http_access.py, http_limits.py and http_options.py (`serve --http`), and
the reader's side of the writer: board.py (what the supervisor loop posts, the verdict on the index made from it by
status_of, and the status and requests the tools ask for). It imports nothing of the CLI layer or of the writer."""

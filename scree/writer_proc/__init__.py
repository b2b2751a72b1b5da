"""The writer process: entry point, sync, watcher, debounce and health (R-W1..R-W5)."""

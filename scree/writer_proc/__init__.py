"""The writer: child.py (serve's spawned child and WriterChild, the parent's handle on it), writer.py (its threads),
sync.py, watcher*.py, debounce.py, health.py, outcome.py (Outcome, also the exit code) and foreground.py (`scree
watch`) (R-W1..R-W5, R-P1..R-P3, R-P6)."""

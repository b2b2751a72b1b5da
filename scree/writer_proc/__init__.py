"""The writer: child.py (serve's spawned child and WriterChild, the parent's handle on it), writer.py (its threads),
sync.py, watcher.py (the contract) with watchers.py (which backend) and watcher_inotify.py / watcher_watchdog.py,
debounce.py, health.py, machine_vectors.py (the machine-wide vector cache, guarded), query_server.py (readers'
query embeddings) and foreground.py (`scree watch`) (R-W1..R-W5, R-P1..R-P3, R-P6). What it says to the supervisor
is protocol.py's."""

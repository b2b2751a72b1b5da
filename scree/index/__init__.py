"""The index folder (R-F2): its file names, opening it for writing, adopting a moved checkout, the machine's list
of indexes (registry.py), writer.lock (lock.py, R-W1) and whether the index can be read (health.py)."""

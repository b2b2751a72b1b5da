"""What the CLI runs beyond serve and watch: operations.py (reindex and search for people), doctor.py, init.py,
settings_view.py (`scree config`), progress.py (R-L1) and envfile.py (the settings file)."""

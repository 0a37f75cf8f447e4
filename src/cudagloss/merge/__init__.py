"""Where a new run meets the committed measurements: the re-run report (rerun.py), and the
merge of measurement folders that a fleet of GPU nodes produced (collect.py)."""

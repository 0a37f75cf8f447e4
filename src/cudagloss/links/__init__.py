"""The link stage: the closed verdicts (status.py), the HTTP checker (checker.py, wire.py),
git history for bylines (history.py) and the stamps written back into term YAML (stamp.py);
run.py runs a whole check of a terms folder."""

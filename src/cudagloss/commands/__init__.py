"""The command line: one module per verb; main.py parses and is the one error boundary."""

"""The verifier: experiments that terms cite, run on a GPU node with cuda-python.

It runs with the node's own python3 and packages (cuda-bindings, numpy, PyYAML, Jinja2),
plus this repository's `src/` on the path; GPU nodes are often offline, so nothing here
needs a package registry. Each experiment is a module with ID, PURPOSE and run(); work
that must happen in a fresh process (everything that calls cuInit under a chosen
environment) goes through `worker.py`.
"""

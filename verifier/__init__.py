"""The verifier: experiments that terms cite, run on a GPU node with cuda-python.

It runs with the node's own python3 and packages, plus this repository's `src/` on the
path; GPU nodes are often offline, so nothing here needs a package registry (README says
which packages; tests/test_house.py imports it with every other package refused).

    __main__.py   `make verify`: options, run inside the one error boundary (cudagloss.boundary)
    runner.py     runs the chosen experiments and records each one's measurement file
    registry.py   the experiments and the hash of each one's code (imports no CUDA)
    experiments/  one module per experiment: ID, PURPOSE and run() -> Outcome
    kernels/      kernels the experiments share, with their fresh-process steps
    spawn.py      fresh processes for steps (fork from a zygote, or exec); worker.py runs one
    cuda.py       NVRTC and the driver API through cuda-bindings; provenance.py, cachedir.py
    recipe.py     the keys a measurement goes stale by; rekey.py migrates them when a rule changes
"""

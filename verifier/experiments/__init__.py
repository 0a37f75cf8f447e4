"""One module per experiment: ID, PURPOSE and run(device, repeats, workdir) -> Outcome.

An experiment's fresh-process steps live in its own module (step_<name>) or in a kernel
module under verifier/kernels/; verifier/registry.py lists the experiments."""

"""Kernels the experiments share, with the fresh-process steps that compile, load and run them."""

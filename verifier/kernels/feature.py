"""One feature of the instruction-availability table: the PTX it is named by, what it does, the
glossary page that explains it, and the smallest kernel that uses it (verifier/kernels/features.py
lists them; verifier/availability.py compiles each for every target)."""

from __future__ import annotations

from dataclasses import dataclass

HEAD = "#define SMEM(p) ((unsigned int)__cvta_generic_to_shared(p))\n"
"""Every source starts with this: a shared-memory address as PTX's 32-bit .shared operand."""


@dataclass(frozen=True)
class Feature:
    id: str
    ptx: str
    """The instruction as the PTX ISA spells it, with the shape and types the kernel uses."""
    label: str
    term: str
    source: str

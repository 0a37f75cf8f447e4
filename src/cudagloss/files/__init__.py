"""Writing files safely: atomic replacement that keeps modes, line endings and concurrent edits."""

"""Compiled Jinja templates kept for the life of the process.

`mkdocs serve` makes a new theme environment for every rebuild, so every Material template
is parsed and compiled again after each edit (a fifth of a rebuild at 1,000 terms). A
bytecode cache in memory lets a new environment reuse the code: Jinja keys it on the
template's name and checks a hash of its source, so an edited template is compiled afresh.
"""

from __future__ import annotations

import jinja2
from jinja2.bccache import Bucket


class MemoryBytecodeCache(jinja2.BytecodeCache):
    def __init__(self) -> None:
        self._code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        code = self._code.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)  # a source whose checksum differs resets the bucket

    def dump_bytecode(self, bucket: Bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()

    def clear(self) -> None:
        self._code.clear()

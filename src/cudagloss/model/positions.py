"""Where each value of a loaded file is, so every later check can point at path:line:col."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Positions:
    """Where each value of one file is, by field path like 'sources[1].url'."""

    values: dict[str, tuple[int, int]] = field(default_factory=dict)
    block_first_line: dict[str, int] = field(default_factory=dict)
    """For literal/folded block scalars: the file line of the scalar's first content line."""

    def at(self, path: str) -> tuple[int, int]:
        """The position of a path, falling back to its nearest recorded parent."""
        while path:
            if path in self.values:
                return self.values[path]
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""
        return self.values.get("", (1, 1))

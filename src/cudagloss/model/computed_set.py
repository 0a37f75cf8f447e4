"""A glossary's computed/ folder: the tables (cudagloss.model.computed) terms cite by name."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cudagloss.errors import Diagnostic, display_path
from cudagloss.files.inside import READ_HINT, first_link
from cudagloss.model.availability import AvailabilityTable, parse_availability
from cudagloss.model.computed import ComputedError, ComputedTable, parse_computed, read_computed_text
from cudagloss.model.source import is_slug

Table = ComputedTable | AvailabilityTable
PARSERS: dict[str, Callable[[str, str, str], Table]] = {"instruction-availability": parse_availability}
"""A computed file's reader by its name; any other name is a table per compute capability
(cudagloss.model.computed). The name is the table's identity: terms cite it, the tool writes it."""


@dataclass
class ComputedSet:
    """A glossary's computed/ folder: only the tables terms cite are read, each once, never
    through a link (the folder, a folder above it up to the repository, or the file)."""

    folder: Path
    root: Path | None = None
    _read: dict[str, tuple[Table | None, list[Diagnostic]]] = field(default_factory=dict, repr=False)

    def link(self) -> str | None:
        """The first component of the folder that is a symbolic link, as shown; None without one."""
        return first_link(
            self.folder, self.root if self.root is not None else Path(os.path.abspath(self.folder)).parent
        )

    def names(self) -> list[str]:
        """The names of the tables there are (file names without .json), sorted."""
        if self.link() is not None or not self.folder.is_dir():
            return []
        return sorted(p.name[:-5] for p in self.folder.iterdir() if p.name.endswith(".json") and is_slug(p.name[:-5]))

    def get(self, name: str) -> tuple[Table | None, list[Diagnostic]]:
        """The table called name, or None with the diagnostics that say why it cannot be used."""
        if name not in self._read:
            shown = display_path(self.folder / f"{name}.json", self.root)
            try:
                if (link := self.link()) is not None:
                    message = "is a symbolic link; the computed folder and the folders above it are plain folders"
                    raise ComputedError([Diagnostic(link, 1, 1, message, READ_HINT)])
                text = read_computed_text(self.folder / f"{name}.json", shown)
                self._read[name] = PARSERS.get(name, parse_computed)(text, shown, name), []
            except ComputedError as exc:
                self._read[name] = None, exc.diagnostics
        return self._read[name]

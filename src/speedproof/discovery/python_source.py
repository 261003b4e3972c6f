"""Which of the target's Python functions holds a line a profile names.

The units are the functions `speedproof.source.python` reads from the file as it is in the
baseline tree. A nested function, lambda, comprehension or generator expression is credited to
the unit that holds it: the profiler sees it as a code object of its own, but a proposer
rewrites the function around it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from speedproof.source.function import SourceFunction
from speedproof.source.python import functions, module_name


class PythonSources:
    """The units of the target's files, read once each, found by file and line."""

    def __init__(self, target: Path, roots: Sequence[Path]) -> None:
        self.target = target
        self.roots = tuple(roots)
        self._files: dict[Path, list[SourceFunction] | None] = {}

    def _units_of(self, path: Path) -> list[SourceFunction] | None:
        if path not in self._files:
            module = module_name(path, self.roots)
            own = module is not None and path.is_relative_to(self.target) and path.is_file()
            if module is None or not own:
                self._files[path] = None
            else:
                relative = path.relative_to(self.target).as_posix()
                self._files[path] = functions(path, relative, module)
        return self._files[path]

    def is_own(self, filename: str) -> bool:
        """Whether a code object's file is the target's: under a source root and the target."""
        return self._units_of(_absolute(filename)) is not None

    def unit_at(self, filename: str, line: int) -> SourceFunction | None:
        """The unit holding `line` of `filename`, or None (module body, class body, not own)."""
        units = self._units_of(_absolute(filename)) or []
        return next((u for u in units if u.start_line <= line <= u.end_line), None)


def _absolute(filename: str) -> Path:
    # Built-ins are reported with the file "~"; frozen modules with "<frozen ...>".
    if not filename.startswith("/"):
        return Path("/nonexistent") / filename.replace("/", "_")
    return Path(filename).resolve()

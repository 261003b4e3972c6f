"""Build hook: the wheel leaves out the modules that only work from a source checkout.

Everything else about the package is in pyproject.toml. `speedproof.demo` (`make demo`) and
`speedproof.examples` (the bundled example targets the demo, the tests and the benchmarks
judge) read the repository's `examples/` folder, which no wheel carries; installed from a wheel
they could only fail. setuptools can leave out packages and data files but not single modules,
hence this one override. The editable install (`pip install -e .`, what `make` uses) puts `src/`
itself on the path, so both modules stay importable there.
"""

from __future__ import annotations

# setuptools ships no type information; the build needs none.
from setuptools import setup  # type: ignore[import-untyped]
from setuptools.command.build_py import build_py  # type: ignore[import-untyped]

# (package, module) pairs kept out of every wheel.
SOURCE_TREE_ONLY = frozenset({("speedproof", "demo"), ("speedproof", "examples")})


class BuildPyWithoutSourceTreeModules(build_py):  # type: ignore[misc]
    def find_package_modules(self, package: str, package_dir: str) -> list[tuple[str, str, str]]:
        found: list[tuple[str, str, str]] = super().find_package_modules(package, package_dir)
        return [m for m in found if (m[0], m[1]) not in SOURCE_TREE_ONLY]


setup(cmdclass={"build_py": BuildPyWithoutSourceTreeModules})

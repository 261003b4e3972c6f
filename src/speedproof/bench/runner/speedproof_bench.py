"""speedproof's runner for a Python benchmark workload, started by the test runner's bootstrap.

`python -s -c BOOTSTRAP SPEC` (`toolchains.python_tests`) imports this module from a folder
holding only it, before the tree's folders are on sys.path, so the harness it imports here at
the top (pytest with pytest-benchmark, or pyperf) is the interpreter's own, never a module of
the same name a candidate added to the tree. Then `main` runs the benchmark: pytest with the
arguments speedproof chose, or the pyperf script as `python SCRIPT ARGS` would, with its own
folder first on sys.path.

Run by the target's interpreter, which may be any Python 3: standard library only, besides the
harnesses, which are imported by name so that neither has to be installed for the other.
"""

from __future__ import annotations

import importlib
import os
import runpy
import sys
from typing import Any

# What each kind imports before the tree is on sys.path: the harness and the plugin modules
# pytest-benchmark's hooks use later.
_HARNESS = {
    "pytest-benchmark": (
        "pytest",
        "pytest_benchmark.plugin",
        "pytest_benchmark.session",
        "pytest_benchmark.utils",
    ),
    "pyperf": ("pyperf",),
}
_MISSING: dict[str, str] = {}
for _kind, _names in _HARNESS.items():
    try:
        for _name in _names:
            importlib.import_module(_name)
    except ImportError as _exc:
        _MISSING[_kind] = str(_exc)


class MachineInfo:
    """A pytest plugin answering pytest-benchmark's two questions about the machine and the
    commit with nothing: its own answers run py-cpuinfo and git in a subprocess on every run
    (about 0.8 s of a 1.6 s run here), and the judge records the machine itself."""

    def pytest_benchmark_generate_machine_info(self, config: Any) -> dict[str, str]:
        return {"node": "recorded by speedproof's judge"}

    def pytest_benchmark_generate_commit_info(self, config: Any) -> dict[str, str]:
        return {}


def _first(plugin: Any) -> Any:
    """`plugin` with its hooks called before pytest-benchmark's own (both answer firstresult)."""
    hookimpl = sys.modules["pytest"].hookimpl(tryfirst=True)
    for name in ("pytest_benchmark_generate_machine_info", "pytest_benchmark_generate_commit_info"):
        hookimpl(getattr(type(plugin), name))
    return plugin


def main(spec: dict[str, Any]) -> int:
    kind = str(spec["kind"])
    if kind in _MISSING:
        print(f"speedproof: {kind} cannot run here: {_MISSING[kind]}", file=sys.stderr)
        return 4
    if kind == "pytest-benchmark":
        plugins = [_first(MachineInfo())]
        return int(sys.modules["pytest"].main(list(spec["args"]), plugins=plugins))
    script = str(spec["script"])
    sys.argv = [script, *spec["args"]]
    sys.path.insert(0, os.path.dirname(script))
    runpy.run_path(script, run_name="__main__")
    return 0

"""What holding the test harness to the baseline's costs a test run (docs/adr/0062, 0063).

Two interleaved series on freshly materialised bundled examples, the baseline's tests each time:
- logstat (Go): the whole test run with each test binary under strace (as judged) and without
  (the binary run by the sandbox directly, nothing traced);
- textstat (pytest): the whole run with speedproof's machinery checks (as judged) and with a copy
  of the plugin whose checks return at once.

Prints the median and every run's wall seconds for each. The runs include compiling the Go test
binaries (warm build cache) and pytest's start-up, which is what a judgement pays.

    .venv/bin/python benchmarks/harness_overhead.py [--runs N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import speedproof.judge.build.go as go
import speedproof.judge.build.python as python
import speedproof.judge.tests.go_processes as processes
from speedproof.examples import get_example, materialise
from speedproof.ground.process import ProcessResult
from speedproof.ground.sandbox import make_sandbox
from speedproof.ground.toolchain import Context, TargetToolchain, Tree, default_cache_dir
from speedproof.judge.build.factory import toolchain_for
from speedproof.manifest_loading import load_manifest


def _untraced(
    context: Context,
    argv: Sequence[str],
    binary: Path,
    *,
    cwd: Path,
    writable: Sequence[Path],
    readable: Sequence[Path],
    env: Mapping[str, str],
    timeout_s: float,
) -> tuple[ProcessResult, processes.Started]:
    ran = context.run(
        argv, cwd=cwd, writable=writable, readable=readable, env=env, timeout_s=timeout_s
    )
    return ran, processes.Started((), 0)


def _tree(name: str, folder: Path) -> tuple[TargetToolchain, Tree]:
    repo = materialise(get_example(name), folder)
    manifest = load_manifest(repo).manifest
    tree = Tree("baseline", repo, repo, folder / f"{name}-out")
    return toolchain_for(manifest, make_sandbox(), caches=default_cache_dir()), tree


def _series(runs: int, modes: dict[str, Callable[[], None]], run: Callable[[], object]) -> None:
    times: dict[str, list[float]] = {mode: [] for mode in modes}
    for i in range(runs):
        order = list(modes) if i % 2 == 0 else list(reversed(modes))
        for mode in order:
            modes[mode]()
            start = time.perf_counter()
            run()
            times[mode].append(time.perf_counter() - start)
    for mode, found in times.items():
        shown = ", ".join(f"{t:.2f}" for t in found)
        print(f"  {mode:<10} median {statistics.median(found):.2f} s  [{shown}]")


def _bare_plugin(folder: Path) -> Path:
    """A copy of speedproof's pytest plugin whose machinery checks do nothing."""
    bare = folder / "bare-plugin"
    shutil.copytree(python.PLUGIN_FOLDER, bare)
    record = bare / "speedproof_record.py"
    text = record.read_text(encoding="utf-8")
    check = "    def _check(self, pluginmanager: pytest.PytestPluginManager) -> None:\n"
    text = text.replace(check, check + "        return\n")
    text = text.replace("        self._altered(machinery.item_problems(item, self._classes))\n", "")
    record.write_text(text, encoding="utf-8")
    return bare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory(prefix="speedproof-harness-") as scratch:
        folder = Path(scratch)
        toolchain, tree = _tree("logstat", folder)
        toolchain.run_tests(tree)  # warm the Go build cache
        traced = processes.run_traced
        print(f"logstat (Go), {runs} interleaved runs each:")
        _series(
            runs,
            {
                "traced": lambda: setattr(go, "run_traced", traced),
                "untraced": lambda: setattr(go, "run_traced", _untraced),
            },
            lambda: toolchain.run_tests(tree),
        )
        go.run_traced = traced  # type: ignore[attr-defined]
        toolchain, tree = _tree("textstat", folder)
        checked, bare = python.PLUGIN_FOLDER, _bare_plugin(folder)
        print(f"textstat (pytest), {runs} interleaved runs each:")
        _series(
            runs,
            {
                "checked": lambda: setattr(python, "PLUGIN_FOLDER", checked),
                "bare": lambda: setattr(python, "PLUGIN_FOLDER", bare),
            },
            lambda: toolchain.run_tests(tree),
        )
        python.PLUGIN_FOLDER = checked


if __name__ == "__main__":
    main()

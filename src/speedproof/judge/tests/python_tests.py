"""How a Python test runner starts for the test gate: isolated from start-up hooks, speedproof's
own runner code first, its record coming back through a pipe (docs/adr/0033).

pytest and unittest both run as `python -s -c BOOTSTRAP SPEC`, with no PYTHONPATH in the
environment. `-c` puts the working folder (the tree) on sys.path only after `site` has run, and
`-s` drops the user site folder, so no `sitecustomize.py`, `usercustomize.py` or `.pth` file of
the tree runs at start-up. The bootstrap takes the working folder off sys.path before it imports
anything start-up did not import already (a tree's `json.py` would otherwise run there), imports
speedproof's runner module from a folder holding only it (which imports its framework: pytest or
unittest), takes that folder off sys.path again, and only then puts the tree's folders on it, as
`python -m pytest` or `python -m unittest` run from the target folder with PYTHONPATH would.
Programs the tests start get PYTHONPATH = the source roots: a test that runs the CLI in a
subprocess still finds the target. Not `-I` or `-E`: they would also drop PYTHONHASHSEED, and set
iteration order must stay the same for baseline and candidate.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.process import ProcessResult
from speedproof.ground.toolchain import Context, TestRun, Tree, clip, process_log
from speedproof.judge.tests.record_channel import RecordChannel
from speedproof.judge.tests.run_record import COMPLETE, CrossCheck, Recorded, read_run

BOOTSTRAP = """\
import sys
sys.path[:] = [p for p in sys.path if p not in ("", ".")]
import importlib, json, os
spec = json.loads(sys.argv[1])
sys.path.insert(0, spec["folder"])
runner = importlib.import_module(spec["runner"])
sys.path.remove(spec["folder"])
sys.path[:0] = spec["path"]
os.environ["PYTHONPATH"] = spec["children"]
raise SystemExit(int(runner.main(spec)))
"""


def isolated_env(context: Context) -> dict[str, str]:
    """The test run's environment: the programs' fixed hash seed and no byte-code, but no
    PYTHONPATH at start-up (the bootstrap sets sys.path; one allowed through from the user's
    environment, if relative, would put the tree back on the start-up path)."""
    env = context.env({"PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"})
    env.pop("PYTHONPATH", None)
    # pytest loads no plugin by itself: speedproof's plugin loads the installed ones with the
    # tree off sys.path, so a `*.dist-info` in the tree names none (docs/adr/0062).
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return env


def _outside_writable(channel: RecordChannel, writable: tuple[Path, ...]) -> None:
    """The pipe's folder must not lie in a folder the run may write, where the pipe could be
    replaced (TMPDIR pointing into the worktree, say)."""
    folder = channel.folder.resolve()
    for place in writable:
        if folder.is_relative_to(place.resolve()):
            raise InfrastructureError(
                f"the test record's folder {folder} lies inside {place}, which the tests may "
                "write; point TMPDIR elsewhere"
            )


def run_recorded(
    context: Context,
    tree: Tree,
    interpreter: Path,
    roots: list[Path],
    spec: Mapping[str, Any],
) -> tuple[ProcessResult, tuple[str, ...], Callable[[], str]]:
    """Run speedproof's runner module `spec["runner"]` from `spec["folder"]` on `tree`; returns
    the process's result, its argv and a function giving the record's text (or raising why
    there is none). The rest of `spec` is the runner's own."""
    writable = (tree.worktree, tree.out)
    folder = Path(spec["folder"])
    with RecordChannel() as channel:
        _outside_writable(channel, writable)
        full = {
            **spec,
            "record": str(channel.path),
            # The target folder first, as `python -m pytest` or `-m unittest` run there has it.
            "path": list(dict.fromkeys([str(tree.root), *(str(r) for r in roots)])),
            "children": ":".join(str(r) for r in roots),
        }
        # -s: no user site folder, whose usercustomize and .pth files would run at start-up.
        argv = (str(interpreter), "-s", "-c", BOOTSTRAP, json.dumps(full))
        result = context.run(
            argv,
            cwd=tree.root,
            readable=(folder, channel.folder),
            writable=writable,
            env=isolated_env(context),
            timeout_s=context.manifest.tests.timeout_s,
        )
        try:
            text, error = channel.text(), None
        except ValueError as exc:
            text, error = "", exc

    def record() -> str:
        if error is not None:
            raise error
        return text

    return result, argv, record


def recorded_test_run(
    context: Context,
    tree: Tree,
    interpreter: Path,
    roots: list[Path],
    spec: Mapping[str, Any],
    *,
    runner: str,
    cross_check: CrossCheck,
    kept: Callable[[Recorded], Recorded],
    names_modules: bool,
) -> TestRun:
    """One test run through speedproof's runner module (`run_recorded`), read from its record
    and cross-checked (`read_run`), narrowed by `kept` to what a re-run asked for. Only a runner
    whose outcome ids tell modules from tests (`names_modules`: unittest) lists the modules;
    pytest's node ids tell them apart by themselves (`TestRun.modules`)."""
    result, argv, record = run_recorded(context, tree, interpreter, roots, spec)
    read = read_run(
        result,
        record,
        runner=runner,
        timeout_s=context.manifest.tests.timeout_s,
        cross_check=cross_check,
    )
    read = kept(read)
    return TestRun(
        outcomes=read.outcomes,
        ran=not result.timed_out and result.exit_code in COMPLETE,
        log=clip(process_log(result)),
        duration_s=result.wall_s,
        command=argv,
        timed_out=result.timed_out,
        note=read.note,
        failures=read.failures,
        collected=read.collected,
        tampered=read.tampered,
        checked=read.checked,
        modules=tuple(sorted(read.modules)) if names_modules else None,
        harness=read.harness,
    )

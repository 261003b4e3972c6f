"""Any other program: the manifest says how to build it, what to run, and how to test it.

The build is the manifest's `build` command (none at all is fine: a script needs no build). The
program is `program`, looked up in the target folder first and then on the sandbox's PATH. A
`command` test runner is one command whose exit code is one synthetic test named `command`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.toolchain import (
    FAILURE_LIMIT,
    BuildResult,
    Context,
    Outcome,
    TestRun,
    Tree,
    clip,
    process_log,
)

COMMAND_TEST_ID = "command"


def resolve_program(name: str, tree: Tree, path: str) -> Path | None:
    """`name` in the target folder (if it has a slash or exists there), else on `path`."""
    local = (tree.root / name).resolve()
    if "/" in name or local.is_file():
        inside = local.is_relative_to(tree.worktree)
        return local if inside and local.is_file() and os.access(local, os.X_OK) else None
    found = shutil.which(name, path=path)
    return Path(found) if found else None


@dataclass(frozen=True)
class CommandBuilder:
    context: Context

    def versions(self) -> dict[str, str]:
        return {}

    def build(self, tree: Tree) -> BuildResult:
        target = self.context.manifest.target
        env = self.context.env()
        log, duration = "", 0.0
        commands: tuple[tuple[str, ...], ...] = ()
        if target.build:
            argv = tuple(target.build)
            commands = (argv,)
            result = self.context.run(
                argv,
                cwd=tree.root,
                writable=(tree.worktree, tree.out),
                env=env,
                timeout_s=self.context.build_timeout_s,
            )
            log, duration = process_log(result), result.wall_s
            if not result.ok:
                return BuildResult(False, None, log, duration, commands)
        name = str(target.program)
        found = resolve_program(name, tree, env["PATH"])
        if found is None:
            log += f"program {name!r}: no executable in {tree.root} or on PATH {env['PATH']}\n"
            return BuildResult(False, None, log, duration, commands)
        # A program the build made is copied anew before each measured run; one found on PATH
        # is the machine's, shared by both sides, and never touched.
        built_here = any(found.is_relative_to(f.resolve()) for f in (tree.worktree, tree.out))
        program = replace(
            self.context.program(tree, (str(found),)),
            binary_size=found.stat().st_size,
            fresh_per_run=(found,) if built_here else (),
        )
        return BuildResult(True, program, log, duration, commands)


@dataclass(frozen=True)
class CommandTests:
    context: Context

    def versions(self) -> dict[str, str]:
        return {}

    def run_tests(self, tree: Tree, only: Sequence[str] | None = None) -> TestRun:
        argv = tuple(self.context.manifest.tests.args)
        if not argv:
            raise InfrastructureError(
                "[tests] runner = 'command' needs `args`: the command that runs the tests"
            )
        if only is not None and COMMAND_TEST_ID not in only:
            return TestRun(outcomes={}, ran=True, log="", duration_s=0.0, command=())
        timeout_s = self.context.manifest.tests.timeout_s
        result = self.context.run(
            argv,
            cwd=tree.root,
            writable=(tree.worktree, tree.out),
            env=self.context.env(),
            timeout_s=timeout_s,
        )
        log = clip(process_log(result))
        if result.timed_out:
            note = f"the test command took longer than tests.timeout_s = {timeout_s:g} s"
            return TestRun({}, False, log, result.wall_s, argv, timed_out=True, note=note)
        outcome: Outcome = "passed" if result.exit_code == 0 else "failed"
        failures = {} if outcome == "passed" else {COMMAND_TEST_ID: clip(log, FAILURE_LIMIT)}
        return TestRun(
            {COMMAND_TEST_ID: outcome}, True, log, result.wall_s, argv, failures=failures
        )

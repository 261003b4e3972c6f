"""The toolchain of a target: the builder for its language joined to the runner for its tests.

It stands above every language module and the benchmark build, which import only the shared types
of `speedproof.ground.toolchain`; nothing below imports this module.
"""

from __future__ import annotations

from pathlib import Path

from speedproof.bench.build import BenchBuilder
from speedproof.ground.sandbox import Sandbox
from speedproof.ground.toolchain import (
    Builder,
    Context,
    TargetToolchain,
    TestRunner,
    default_cache_dir,
)
from speedproof.judge.build.command import CommandBuilder, CommandTests
from speedproof.judge.build.go import GoBuilder, GoTests, GoTool
from speedproof.judge.build.python import PytestTests, PythonBuilder, PythonTool
from speedproof.judge.tests.unittest_runner import UnittestTests
from speedproof.manifest import PYTHON_RUNNERS, Manifest


def toolchain_for(
    manifest: Manifest, sandbox: Sandbox, *, caches: Path | None = None
) -> TargetToolchain:
    """The builder for `[target] language` joined to the runner for `[tests] runner`.

    The sandbox is required, not defaulted: running a candidate unsandboxed is the user's
    explicit choice (`make_sandbox(allow_unsandboxed=True)`), never this function's.
    """
    language, runner = manifest.target.language, manifest.tests.runner
    go = GoTool.locate() if "go" in (language, runner) else None
    wants_python = language == "python" or runner in PYTHON_RUNNERS
    python = PythonTool.for_manifest(manifest) if wants_python else None
    tools = (*(go.folders() if go else ()), *(python.folders if python else ()))
    context = Context(
        manifest=manifest,
        sandbox=sandbox,
        caches=caches or default_cache_dir(),
        tools=tuple(dict.fromkeys(tools)),
    )
    builder: Builder
    if go is not None and language == "go":
        builder = GoBuilder(context, go)
    elif python is not None and language == "python":
        builder = PythonBuilder(context, python)
    else:
        builder = CommandBuilder(context)
    if manifest.benchmarks:
        interpreter = python.interpreter if python is not None else None
        builder = BenchBuilder(context, builder, go if language == "go" else None, interpreter)
    tests: TestRunner
    if go is not None and runner == "go":
        tests = GoTests(context, go)
    elif python is not None and runner == "pytest":
        tests = PytestTests(context, python)
    elif python is not None and runner == "unittest":
        tests = UnittestTests(context, python)
    else:
        tests = CommandTests(context)
    return TargetToolchain(manifest=manifest, context=context, builder=builder, tests=tests)

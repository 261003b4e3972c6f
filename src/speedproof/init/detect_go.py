"""A Go module: its name, `main` packages, toolchain, tests and benchmarks.

`main` packages come from `go list -e ./...` run offline (GOPROXY=off: nothing is downloaded,
and `-e` lists packages whose imports cannot be found), else from the `package` clause of every
non-test `.go` file (folders named `testdata`, `vendor` or starting with `.` are skipped, as Go
skips them). A binary is called after its folder, the module's root package after the module's
last path element, as `go build` names them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.sandbox import build_env
from speedproof.ground.toolchain import default_cache_dir
from speedproof.init.files import read_text, source_files, where
from speedproof.init.model import Benchmark, EntryPoint, Project, TestSetup
from speedproof.init.probe import run_probe
from speedproof.judge.build.go import GoTool

MARKER = "go.mod"
_MODULE = re.compile(r"^module\s+(\S+)", re.MULTILINE)
_PACKAGE = re.compile(r"^package\s+(\w+)", re.MULTILINE)
_BENCHMARK = re.compile(r"^func\s+(Benchmark\w*)\s*\(\s*\w+\s+\*testing\.B\s*\)", re.MULTILINE)
# `go list ./...` of a module with a few hundred packages takes ~2 s warm; 120 s covers a cold
# disk, as in preflight.
_GO_LIST_TIMEOUT_S = 120.0


def marker(root: Path) -> str | None:
    return MARKER if (root / MARKER).is_file() else None


def detect(root: Path, found_by: str) -> Project:
    warnings: list[str] = []
    module = _module_path(root)
    try:
        tool: GoTool | None = GoTool.locate()
    except InfrastructureError as exc:
        tool = None
        warnings.append(str(exc))
    mains = (_listed_mains(tool, root) if tool else None) or list(_parsed_mains(root))
    last = module.rsplit("/", 1)[-1] if module else root.resolve().name
    entries = tuple(
        EntryPoint(
            last if folder == root else folder.name,
            "go-main",
            {"package": _package_arg(root, folder)},
            f"package main in {_package_arg(root, folder)}",
        )
        for folder in mains
    )
    if not entries:
        warnings.append("no `package main` found: there is no program for the judge to build")
    return Project(
        root=root,
        language="go",
        name=last,
        marker=found_by,
        entry_points=entries,
        tests=TestSetup("go", ("./...",), "go.mod: `go test ./...`"),
        toolchain=tool.version if tool else "Go not found",
        benchmarks=tuple(_benchmarks(root)),
        warnings=tuple(warnings),
    )


def _module_path(root: Path) -> str | None:
    found = _MODULE.search(read_text(root / MARKER))
    return found.group(1).strip('"') if found else None


def _package_arg(root: Path, folder: Path) -> str:
    """`.` or `./cmd/tool`: what `go build` is given, relative to the module."""
    relative = folder.relative_to(root).as_posix()
    return "." if relative == "." else f"./{relative}"


def _go_env(tool: GoTool) -> dict[str, str]:
    """Offline and local: the toolchain installed, no proxy, the module cache speedproof uses."""
    cache = default_cache_dir()
    return build_env(
        [],
        {
            "GOROOT": str(tool.goroot),
            "GOPATH": str(cache / "gopath"),
            "GOCACHE": str(cache / "go-build"),
            # No -mod flag: Go's default reads vendor/ when there is one and never edits go.mod.
            "GOFLAGS": "",
            "GOPROXY": "off",
            "GOTOOLCHAIN": "local",
            "GOENV": "off",
            "GOWORK": "off",
        },
    )


def _listed_mains(tool: GoTool, root: Path) -> list[Path] | None:
    """Folders of `main` packages as `go list` reports them; None when it cannot say."""
    argv = [str(tool.binary), "list", "-e", "-f", "{{.Name}}\t{{.Dir}}", "./..."]
    done = run_probe(argv, timeout_s=_GO_LIST_TIMEOUT_S, cwd=root, env=_go_env(tool))
    if isinstance(done, str) or done.returncode != 0:
        return None
    found = []
    for line in done.stdout.splitlines():
        name, _, folder = line.partition("\t")
        path = Path(folder).resolve() if folder else None
        if name == "main" and path is not None and path.is_relative_to(root):
            found.append(path)
    return sorted(found, key=lambda f: (f != root, str(f)))


def _parsed_mains(root: Path) -> Iterator[Path]:
    seen: set[Path] = set()
    for path in source_files(root, ".go"):
        if path.name.endswith("_test.go") or path.parent in seen:
            continue
        clause = _PACKAGE.search(read_text(path))
        if clause is not None and clause.group(1) == "main":
            seen.add(path.parent)
    yield from sorted(seen, key=lambda f: (f != root, str(f)))


def _benchmarks(root: Path) -> Iterator[Benchmark]:
    for path in source_files(root, "_test.go"):
        text = read_text(path)
        for match in _BENCHMARK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            yield Benchmark("go", match.group(1), where(path, root, line))

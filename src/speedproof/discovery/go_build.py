"""The profiling build of a Go target: the baseline's files plus a generated `main`, via -overlay.

`go build -overlay FILE` compiles the package as if some files had other contents and others
existed: here each file of package main that declares `main` or calls `os.Exit` is replaced by
its wrapped copy (go_source.wrap_main) and the generated file is added, all written in the build
folder. Nothing is written to the worktree and nothing is copied out of it: the overlay compiles
exactly the baseline's files, under their own names, so with -trimpath pprof reports them by
module path (`example.com/logstat/parse.go`) and every line number is the baseline's. A copy of
the module would give the same binary at the cost of copying the repository.

The worktree is bound writable for `go list` and `go build`, as for the ordinary build: the
sandbox mounts a private /tmp and binds only writable folders, and worktrees live under /tmp.
What the build writes goes to the build folder (overlay files, `-o` binary) and Go's caches.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from speedproof.discovery.go_source import GENERATED_FILE, GENERATED_SOURCE, check_free, wrap_main
from speedproof.discovery.hot import DiscoveryError
from speedproof.ground.toolchain import Context, Tree, process_log, safe_name
from speedproof.judge.build.go import GoTool, go_caches, go_env


@dataclass(frozen=True)
class GoPackage:
    """The main package as `go list` sees it, and the module it belongs to."""

    folder: Path
    files: tuple[str, ...]
    module_path: str
    module_folder: Path


def _writable(context: Context, tool: GoTool, tree: Tree, folder: Path) -> tuple[Path, ...]:
    found = [tree.worktree, folder, *go_caches(context)]
    if tool.download_cache is not None and tool.download_cache.is_relative_to("/tmp"):
        found.append(tool.download_cache)
    return tuple(found)


def go_run(
    context: Context, tool: GoTool, tree: Tree, folder: Path, args: list[str], cwd: Path
) -> bytes:
    """One `go` command in the sandbox; its stdout, or an error naming what it said."""
    argv = (str(tool.binary), *args)
    result = context.run(
        argv,
        cwd=cwd,
        writable=_writable(context, tool, tree, folder),
        env=go_env(context, tool, tree),
        timeout_s=context.build_timeout_s,
    )
    if not result.ok:
        raise DiscoveryError(f"`go {' '.join(args[:2])}` failed:\n{process_log(result)[-3000:]}")
    return result.stdout


def list_package(context: Context, tool: GoTool, tree: Tree, folder: Path) -> GoPackage:
    package = context.manifest.target.package
    said = go_run(
        context, tool, tree, folder, ["list", "-json=Dir,Name,GoFiles,Module", package], tree.root
    )
    try:
        info = json.loads(said)
        module = info["Module"]
        found = GoPackage(
            folder=Path(info["Dir"]),
            files=tuple(str(f) for f in info.get("GoFiles") or ()),
            module_path=str(module["Path"]),
            module_folder=Path(module["Dir"]),
        )
        name = str(info["Name"])
    except (ValueError, KeyError, TypeError) as exc:
        raise DiscoveryError(f"`go list {package}` said something unreadable: {exc}") from exc
    if name != "main":
        raise DiscoveryError(f"{package!r} is package {name}, not a main package")
    return found


def _overlay(package: GoPackage, folder: Path) -> Path:
    check_free(package.folder, list(package.files))
    sources = folder / "overlay"
    sources.mkdir(parents=True, exist_ok=True)
    replace: dict[str, str] = {}
    mains = 0
    for name in package.files:
        wrapped = wrap_main((package.folder / name).read_bytes())
        mains += wrapped.has_main
        if wrapped.has_main or wrapped.exits:
            copy = sources / name
            copy.write_bytes(wrapped.source)
            replace[str(package.folder / name)] = str(copy)
    if mains != 1:
        raise DiscoveryError(f"package main in {package.folder} declares `func main` {mains} times")
    generated = sources / GENERATED_FILE
    generated.write_text(GENERATED_SOURCE, encoding="utf-8")
    replace[str(package.folder / GENERATED_FILE)] = str(generated)
    overlay = folder / "overlay.json"
    overlay.write_text(json.dumps({"Replace": replace}, indent=1), encoding="utf-8")
    return overlay


def profiling_build(context: Context, tool: GoTool, tree: Tree, folder: Path) -> GoPackage:
    """Build the profiling binary at `folder/bin/NAME`; the package it was built from."""
    package = list_package(context, tool, tree, folder)
    overlay = _overlay(package, folder)
    binary = binary_path(context, folder)
    argv = ["build", "-trimpath", "-overlay", str(overlay), "-o", str(binary)]
    go_run(context, tool, tree, folder, [*argv, context.manifest.target.package], tree.root)
    if not binary.is_file():
        raise DiscoveryError(f"the profiling build wrote no binary at {binary}")
    return package


def binary_path(context: Context, folder: Path) -> Path:
    return folder / "bin" / safe_name(context.manifest.target.name)

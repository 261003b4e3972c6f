"""Discovery: profile the baseline on its representative workloads and rank its hot functions.

`discover` picks the profiler by `[target] language`: cProfile for Python, pprof through a
profiling build for Go (docs/adr/0022-discovery-profilers.md). Samples are credited to the
target's own functions only, never to the standard library or the runtime, and each hot
function comes with its file, its whole line range and its text at the base revision.
"""

from __future__ import annotations

from speedproof.discovery.hot import DiscoveryError, HotFunction, Profile
from speedproof.discovery.runs import Budget, representative
from speedproof.ground.sandbox import Sandbox
from speedproof.ground.toolchain import TargetToolchain, Tree
from speedproof.manifest_loading import LoadedManifest

__all__ = [
    "Budget",
    "DiscoveryError",
    "HotFunction",
    "Profile",
    "discover",
    "representative",
]


def discover(
    loaded: LoadedManifest,
    tree: Tree,
    *,
    sandbox: Sandbox,
    toolchain: TargetToolchain,
    top: int = 12,
    min_samples: int = 200,
    budget: Budget | None = None,
) -> Profile:
    """The `top` hottest functions of the baseline `tree`, run on representative workloads.

    `tree` is the baseline as checked out; it is never modified (Go's profiling build overlays
    its generated files from the build folder). Every run goes through `sandbox`.
    """
    if top < 1 or min_samples < 1:
        raise ValueError("top and min_samples must be at least 1")
    manifest = loaded.manifest
    language = manifest.target.language
    chosen = budget or Budget()
    if language == "python":
        from speedproof.discovery.python_profile import profile_python

        return profile_python(
            manifest,
            tree,
            sandbox=sandbox,
            toolchain=toolchain,
            top=top,
            min_samples=min_samples,
            budget=chosen,
        )
    if language == "go":
        from speedproof.discovery.go_profile import profile_go

        return profile_go(
            manifest,
            tree,
            sandbox=sandbox,
            toolchain=toolchain,
            top=top,
            min_samples=min_samples,
            budget=chosen,
        )
    raise DiscoveryError(
        f"discovery has no profiler for {language!r} targets: it profiles python and go"
    )

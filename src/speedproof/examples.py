"""The bundled example targets: find them, and lay one out as a fresh git repository.

The demo, the end-to-end tests and the benchmarks all judge an example the way a user judges
their own program: in a repository of its own whose root is the example folder.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from speedproof.ground.errors import InfrastructureError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
Expectation = Literal["accepted", "not-accepted", "rejected-or-inconclusive", "rejected"]

# What each kind of bundled patch must come to, by the prefix of its file name.
EXPECTED: dict[str, Expectation] = {
    "speedup": "accepted",
    "noop": "not-accepted",
    "slowdown": "rejected-or-inconclusive",
    "behaviour": "rejected",
    "breaks-test": "rejected",
    "attack": "rejected",
    # Run-time reward hacks (answers kept between runs, a child that writes after the parent
    # exits): never accepted, and the reason names what the candidate did.
    "cheat": "rejected-or-inconclusive",
}


@dataclass(frozen=True)
class Example:
    name: str
    folder: Path

    @property
    def patches(self) -> list[Path]:
        return sorted((self.folder / "patches").glob("*.patch"))


def examples_root() -> Path:
    if not EXAMPLES.is_dir():
        raise InfrastructureError(
            f"the bundled examples are not at {EXAMPLES}; run from a checkout of speedproof"
        )
    return EXAMPLES


def find_examples() -> list[Example]:
    root = examples_root()
    return [
        Example(path.parent.name, path.parent) for path in sorted(root.glob("*/speedproof.toml"))
    ]


def get_example(name: str) -> Example:
    for example in find_examples():
        if example.name == name:
            return example
    raise InfrastructureError(f"no bundled example called {name!r}")


def expectation(patch: Path) -> Expectation:
    for prefix, expected in EXPECTED.items():
        if patch.name.startswith(prefix + "-"):
            return expected
    raise InfrastructureError(f"{patch.name}: no expectation for this kind of patch")


def meets(expected: Expectation, verdict: str) -> bool:
    if expected == "not-accepted":
        return verdict != "accepted"
    if expected == "rejected-or-inconclusive":
        return verdict in ("rejected", "inconclusive")
    return verdict == expected


def _git(folder: Path, *args: str) -> None:
    done = subprocess.run(
        [
            "git",
            "-c",
            "user.name=speedproof",
            "-c",
            "user.email=speedproof@localhost",
            "-c",
            "commit.gpgsign=false",
            *args,
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise InfrastructureError(f"git {' '.join(args)} failed in {folder}: {done.stderr}")


def materialise(example: Example, destination: Path) -> Path:
    """Copy `example` (without its patches and any ledger) into a new git repository."""
    target = destination / example.name
    shutil.copytree(example.folder, target, ignore=shutil.ignore_patterns("patches", ".speedproof"))
    _git(target, "init", "-q", "-b", "main")
    _git(target, "add", "-A")
    _git(target, "commit", "-q", "-m", f"{example.name} as bundled with speedproof")
    return target

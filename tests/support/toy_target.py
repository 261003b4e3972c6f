"""The toy target many tests judge or measure: its manifest, written from the parts that differ,
and the project around it as a fresh git repository.

Two kinds of toy. `language="python"` is a script `tool.py` run by speedproof's Python
toolchain; `language="command"` runs `python3` on the workload's arguments (a `prog.py` the test
writes). Both have a test command that always passes, so only what a test is about can fail,
unless the test names another `entry` (a module, another script) or another `tests` table (a
real pytest suite, `PYTEST_SUITE`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from support.git import commit_all, git

Language = Literal["python", "command"]

# What runs the target, and a test command that passes on every run, for each kind.
_ENTRY: dict[Language, str] = {
    "python": 'script = "tool.py"',
    "command": 'program = "python3"',
}
_PASSING: dict[Language, Sequence[str]] = {
    "python": ("python3", "-c", "pass"),
    "command": ("true",),
}
# The `[tests]` table of a toy that ships a real pytest suite under tests/.
PYTEST_SUITE = 'runner = "pytest"\nargs = ["tests"]\ntimeout_s = 60'


def _toml_list(items: Sequence[str]) -> str:
    # JSON's string quoting is TOML's basic string quoting for the text the tests use.
    return "[" + ", ".join(json.dumps(item) for item in items) + "]"


def workload_table(
    id: str,
    *args: str,
    tier: str | None = None,
    files: Sequence[str] = (),
    generate: Sequence[str] = (),
    timeout_s: int | None = None,
) -> str:
    """One `[[workloads]]` table: `args` for the program, the repository `files` it reads, the
    command that `generate`s its input, a run's `timeout_s`."""
    lines = ["[[workloads]]", f'id = "{id}"']
    if tier is not None:
        lines.append(f'tier = "{tier}"')
    if args:
        lines.append(f"args = {_toml_list(args)}")
    if files:
        lines.append(f"files = {_toml_list(files)}")
    if generate:
        lines.append(f"generate = {_toml_list(generate)}")
    if timeout_s is not None:
        lines.append(f"timeout_s = {timeout_s}")
    return "\n".join(lines) + "\n"


def reported_tables(repeats: int) -> str:
    """The tables of a program that reports its own figures: its stdout is not compared, its
    `latency_s` is the primary metric (lower, 5 % to count), read `repeats` times a side, and the
    `success` it reports must hold within 1 %."""
    return (
        "[behaviour]\ncompare_stdout = false\n\n"
        '[reported]\nprimary = "latency_s"\ndirection = "lower"\nmin_delta_pct = 5.0\n'
        f"repeats = {repeats}\n\n"
        '[[reported.protected]]\nname = "success"\ndirection = "higher"\ntolerance_pct = 1.0\n'
    )


def toy_manifest(
    *workloads: str,
    name: str = "toy",
    language: Language = "command",
    entry: str | None = None,
    tests: str | None = None,
    instructions: bool = True,
    extra: str = "",
    policy: str | None = None,
) -> str:
    """The manifest's text: the target's `entry` line (the kind's own if None), the `tests`
    table's lines (a command that passes if None), `workloads` (from `workload_table`, one `w`
    with no arguments if none), instruction counting off unless `instructions`, then the `extra`
    tables as given, then a `[policy]` table holding the `policy` lines if there are any."""
    passing = f'runner = "command"\nargs = {_toml_list(_PASSING[language])}'
    parts = [
        f'[target]\nname = "{name}"\nlanguage = "{language}"\n{entry or _ENTRY[language]}\n',
        f"[tests]\n{tests or passing}\n",
        *(workloads or (workload_table("w"),)),
    ]
    if not instructions:
        parts.append("[instructions]\nenabled = false\n")
    if extra:
        parts.append(extra.rstrip("\n") + "\n")
    if policy is not None:
        parts.append(f"[policy]\n{policy.rstrip(chr(10))}\n")
    return "\n".join(parts)


def toy_target(folder: Path, manifest: str, files: Mapping[str, str]) -> Path:
    """`files` (path -> text) and `manifest` as `speedproof.toml` in `folder`, committed as a
    fresh repository's one commit on branch main; returns `folder`."""
    for name, text in {**files, "speedproof.toml": manifest}.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(folder, "init", "-q", "-b", "main")
    commit_all(folder, folder.name)
    return folder

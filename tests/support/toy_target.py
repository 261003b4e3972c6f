"""The toy target many tests judge or measure: its manifest, written from the parts that differ,
and the project around it as a fresh git repository.

Two kinds of toy. `language="python"` is a script `tool.py` run by speedproof's Python
toolchain; `language="command"` runs `python3` on the workload's arguments (a `prog.py` the test
writes). Both have a test command that always passes, so only what a test is about can fail.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from support.git import commit_all, git

Language = Literal["python", "command"]

# What runs the target, and a test command that passes on every run, for each kind.
_TARGET: dict[Language, str] = {
    "python": 'language = "python"\nscript = "tool.py"\n',
    "command": 'language = "command"\nprogram = "python3"\n',
}
_TESTS: dict[Language, Sequence[str]] = {
    "python": ("python3", "-c", "pass"),
    "command": ("true",),
}


def _toml_list(items: Sequence[str]) -> str:
    # JSON's string quoting is TOML's basic string quoting for the text the tests use.
    return "[" + ", ".join(json.dumps(item) for item in items) + "]"


def workload_table(
    id: str,
    *args: str,
    tier: str | None = None,
    files: Sequence[str] = (),
    generate: Sequence[str] = (),
) -> str:
    """One `[[workloads]]` table: `args` for the program, the repository `files` it reads, the
    command that `generate`s its input."""
    lines = ["[[workloads]]", f'id = "{id}"']
    if tier is not None:
        lines.append(f'tier = "{tier}"')
    if args:
        lines.append(f"args = {_toml_list(args)}")
    if files:
        lines.append(f"files = {_toml_list(files)}")
    if generate:
        lines.append(f"generate = {_toml_list(generate)}")
    return "\n".join(lines) + "\n"


def toy_manifest(
    *workloads: str,
    name: str = "toy",
    language: Language = "command",
    instructions: bool = True,
    extra: str = "",
    policy: str | None = None,
) -> str:
    """The manifest's text: `workloads` (from `workload_table`, one `w` with no arguments if none),
    instruction counting off unless `instructions`, then the `extra` tables as given, then a
    `[policy]` table holding the `policy` lines if there are any."""
    parts = [
        f'[target]\nname = "{name}"\n{_TARGET[language]}',
        f'[tests]\nrunner = "command"\nargs = {_toml_list(_TESTS[language])}\n',
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

"""Which of the explorer's proposed workloads may widen profiling, and why the others may not.

A proposal is refused, with its reason, when:

- its id is not new: a manifest workload's id (any tier, holdout included) or an earlier
  proposal's; or it comes after the fifth (`MAX_PROPOSALS`, as the answer schema allows);
- an argument holds a NUL byte (no process can receive it);
- a file it names is absolute, leaves the target folder (`..`, or a symlink pointing out), is
  not a regular file in the target folder at the parent revision, or is a protected path
  (`workspace.protected`: tests, the manifest, `protect.paths`, every workload's input files).

One exception to the last rule: an input file of a workload the explorer was shown (any tier
but holdout) may be read, because reading the inputs the listed workloads read, with other
flags, is exactly what the explorer is asked to do. Those files are protected against edits,
not against reading. Holdout inputs are never shown and stay refused, so no explorer workload
can profile a holdout input.

An argument names a file when it, or the value of a `--flag=value`, contains a `/` or names an
existing entry of the target folder; a bare flag (`-v`, `--top`) and a plain value (`3`,
`words`) name none. Whether a workload runs at all is tried afterwards (`ParentTree.probe`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from speedproof.agents.answers import ProposedWorkload
from speedproof.judge.guard.protected import ProtectedPaths
from speedproof.manifest import Manifest, Workload
from speedproof.manifest_loading import LoadedManifest

MAX_PROPOSALS = 5
# An explorer workload may run as long as the longest representative workload may.
DEFAULT_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Screened:
    """One proposal and what became of it: a workload to profile, or the reason it is not."""

    proposal: ProposedWorkload
    workload: Workload | None
    reason: str | None

    def refused(self, reason: str) -> Screened:
        return Screened(self.proposal, None, reason)

    def to_record(self) -> dict[str, Any]:
        return {
            "id": self.proposal.id,
            "args": list(self.proposal.args),
            "rationale": self.proposal.rationale,
            "accepted": self.workload is not None,
            "reason": self.reason,
        }


def shown_workloads(manifest: Manifest) -> list[dict[str, Any]]:
    """The workloads the explorer is shown: every tier but holdout."""
    return [
        {"id": w.id, "args": list(w.args), "tier": w.tier}
        for w in manifest.workloads
        if w.tier != "holdout"
    ]


def workload_record(workload: Workload) -> dict[str, Any]:
    """What the ledger keeps of an accepted explorer workload."""
    return {
        "id": workload.id,
        "args": list(workload.args),
        "files": list(workload.files),
        "timeout_s": workload.timeout_s,
    }


def profiling_workload(record: dict[str, Any]) -> Workload:
    """An accepted explorer workload as discovery runs it. Representative is the tier discovery
    profiles; this workload only ever sits in discovery's copy of the manifest."""
    return Workload(
        id=str(record["id"]),
        tier="representative",
        args=[str(a) for a in record["args"]],
        files=[str(f) for f in record.get("files", [])],
        timeout_s=float(record.get("timeout_s", DEFAULT_TIMEOUT_S)),
    )


class Screen:
    """The checks of one target at one parent revision."""

    def __init__(self, loaded: LoadedManifest, *, repo: Path, target_root: Path) -> None:
        manifest = loaded.manifest
        self.root = target_root.resolve()
        self.target_dir = loaded.root.resolve().relative_to(repo.resolve()).as_posix()
        self.protected = ProtectedPaths.for_manifest(loaded, repo_root=repo)
        self.taken = {w.id for w in manifest.workloads}
        self.readable = _inputs(w for w in manifest.workloads if w.tier != "holdout")
        self.holdout = _inputs(w for w in manifest.workloads if w.tier == "holdout")
        self.timeout_s = max(
            (w.timeout_s for w in manifest.workloads if w.tier == "representative"),
            default=DEFAULT_TIMEOUT_S,
        )

    def screen(self, proposals: Sequence[ProposedWorkload]) -> list[Screened]:
        found: list[Screened] = []
        for index, proposal in enumerate(proposals):
            reason = self._id_reason(proposal.id, index)
            files: list[str] = []
            if reason is None:
                files, reason = self._files(proposal.args)
            self.taken.add(proposal.id)
            workload = None
            if reason is None:
                record = {"id": proposal.id, "args": proposal.args, "files": files}
                workload = profiling_workload({**record, "timeout_s": self.timeout_s})
            found.append(Screened(proposal, workload, reason))
        return found

    def _id_reason(self, workload_id: str, index: int) -> str | None:
        if index >= MAX_PROPOSALS:
            return f"more than {MAX_PROPOSALS} workloads were proposed"
        if workload_id in self.taken:
            return f"the id {workload_id!r} is already a workload's"
        return None

    def _files(self, args: Sequence[str]) -> tuple[list[str], str | None]:
        """The files `args` name (target-relative), or the reason one of them is refused."""
        files: list[str] = []
        for arg in args:
            if "\0" in arg:
                return [], f"argument {arg!r} holds a NUL byte"
            value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
            if value.startswith("-") or not value or not self._names_file(value):
                continue
            reason = self._file_reason(value)
            if reason is not None:
                return [], f"argument {arg!r}: {reason}"
            files.append(posixpath.normpath(value))
        return sorted(set(files)), None

    def _names_file(self, value: str) -> bool:
        return "/" in value or "\\" in value or (self.root / value).exists()

    def _file_reason(self, value: str) -> str | None:
        if posixpath.isabs(value) or "\\" in value:
            return "names a path outside the target folder (absolute, or not a POSIX path)"
        relative = posixpath.normpath(value)
        if relative == ".." or relative.startswith("../"):
            return "names a path outside the target folder"
        path = (self.root / relative).resolve()
        if not path.is_relative_to(self.root):
            return "names a path that leads outside the target folder"
        if not path.is_file():
            return f"{relative} is not a file in the target folder"
        if relative in self.readable:
            return None
        if relative in self.holdout:
            return f"{relative} is a holdout workload's input, which no proposal may use"
        why = self.protected.reason(posixpath.join(self.target_dir, relative))
        return None if why is None else f"{relative} is a protected path: {why}"


def _inputs(workloads: Iterable[Workload]) -> set[str]:
    return {
        posixpath.normpath(name)
        for w in workloads
        for name in [*w.files, *([w.stdin] if w.stdin else [])]
    }

"""Unified diffs written by a model, made safe to hand to the guard.

Models get the mechanics of a diff wrong in predictable ways: a markdown fence around it, paths
relative to the folder they were shown rather than the repository, `a/`/`b/` prefixes present
or not, hunk line counts that do not add up, prose between hunks. This module reads the file
sections and hunks (prose ends a hunk), maps every path from the target folder to the
repository root, recounts each hunk from its body, and asks `git apply --check` at the base
revision. Renames, deletions, mode changes and binary parts are refused: a speed-up needs none.
The patch handed on is then recomputed from the files' old and new text, so its headers and
hunk positions are always the ones code wrote.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from speedproof.agents.edits.files import TargetFile, TargetFiles
from speedproof.agents.edits.result import EditRejected
from speedproof.ground.git import git, git_ok
from speedproof.judge.guard.patch_text import normalise_patch

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$")
_REFUSED = {
    "GIT binary patch": "binary changes",
    "Binary files ": "binary changes",
    "rename from ": "renames",
    "rename to ": "renames",
    "copy from ": "copies",
    "copy to ": "copies",
    "deleted file mode ": "deleting files",
    "old mode ": "mode changes",
    "new mode ": "mode changes",
}
_BODY = (" ", "+", "-", "\\")


@dataclass
class _Hunk:
    old_start: int
    new_start: int
    rest: str
    body: list[str] = field(default_factory=list)

    def text(self) -> str:
        while self.body and self.body[-1] == "":
            self.body.pop()  # blank lines after a hunk separate sections; they are not context
        lines = [line or " " for line in self.body]
        old = sum(1 for line in lines if line[0] in " -")
        new = sum(1 for line in lines if line[0] in " +")
        header = f"@@ -{self.old_start},{old} +{self.new_start},{new} @@{self.rest}\n"
        return header + "".join(f"{line}\n" for line in lines)


@dataclass
class _Section:
    old: str | None
    new: str | None
    hunks: list[_Hunk] = field(default_factory=list)


@dataclass(frozen=True)
class DiffChange:
    """One file the diff changes: where it is, its text before (None: new file) and after."""

    file: TargetFile
    old: str | None
    new: str


def read_sections(text: str) -> list[_Section]:
    """The file sections of a diff; diff-malformed when it has none or holds refused parts."""
    lines = normalise_patch(text).split("\n")
    sections: list[_Section] = []
    hunk: _Hunk | None = None
    for index, line in enumerate(lines):
        for marker, what in _REFUSED.items():
            if line.startswith(marker) and hunk is None:
                raise EditRejected("diff-malformed", f"the diff holds {what}, which are refused")
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if line.startswith("--- ") and following.startswith("+++ "):
            sections.append(_Section(_header_name(line), _header_name(following)))
            hunk = None
            continue
        hunk = _read_line(line, sections, hunk)
    if not sections:
        raise EditRejected("diff-malformed", "no `--- a/file` / `+++ b/file` header in the diff")
    return sections


def _read_line(line: str, sections: list[_Section], hunk: _Hunk | None) -> _Hunk | None:
    """Add `line` to the diff read so far; the hunk it belongs to, or None outside hunks."""
    if line.startswith("@@"):
        found = _HUNK.match(line)
        if found is None or not sections:
            where = "before any file header" if found else f"without line numbers: {line!r}"
            raise EditRejected(
                "diff-malformed",
                f"a hunk header {where}; use kind search_replace when positions are unknown",
            )
        hunk = _Hunk(int(found.group(1)), int(found.group(2)), found.group(3))
        sections[-1].hunks.append(hunk)
        return hunk
    if hunk is not None and (line == "" or line.startswith(_BODY)):
        hunk.body.append(line)
        return hunk
    return None  # a header line, or prose: either ends the hunk


def _header_name(line: str) -> str | None:
    # GNU diff puts a tab and a timestamp after the name.
    name = line[4:].split("\t", 1)[0].strip()
    return None if name == "/dev/null" else name


def _target_name(files: TargetFiles, name: str) -> str:
    """The answer's name without an `a/` or `b/` prefix, unless the target has such a folder."""
    if name[:2] in ("a/", "b/") and not (files.root / name).exists():
        return name[2:]
    return name


def changes_of(files: TargetFiles, worktree: Path, text: str) -> list[DiffChange]:
    """The files the diff changes and their new text, after `git apply --check` accepted it."""
    sections = read_sections(text)
    located = [_locate(files, section) for section in sections]
    names = [file.repo_path for file, _ in located]
    if len(set(names)) != len(names):
        raise EditRejected("diff-malformed", "a file appears in two sections; give one per file")
    patch = "".join(
        _section_text(file, created, s)
        for (file, created), s in zip(located, sections, strict=True)
    )
    check, _ = git(worktree, "apply", "--check", "--whitespace=nowarn", "-", stdin=patch.encode())
    if not check.ok:
        raise EditRejected(
            "diff-does-not-apply",
            f"`git apply --check` refuses the diff at the base revision: {check.describe()}; "
            "copy the context lines exactly",
        )
    return _applied(files, located, patch)


def _locate(files: TargetFiles, section: _Section) -> tuple[TargetFile, bool]:
    """The section's file, and whether the diff creates it."""
    if section.new is None:
        raise EditRejected("diff-malformed", "the diff deletes a file, which is refused")
    new = files.locate(_target_name(files, section.new), must_exist=False)
    if section.old is None:
        if new.path.exists():
            raise EditRejected("diff-malformed", f"the diff creates {new.name}, which exists")
        return new, True
    old = files.locate(_target_name(files, section.old))
    if old != new:
        raise EditRejected(
            "diff-malformed", f"the diff renames {old.name} to {new.name}, which is refused"
        )
    if not section.hunks:
        raise EditRejected("diff-malformed", f"the section for {old.name} has no hunk")
    return old, False


def _section_text(file: TargetFile, created: bool, section: _Section) -> str:
    before = "/dev/null" if created else f"a/{file.repo_path}"
    mode = "new file mode 100644\n" if created else ""
    head = f"diff --git a/{file.repo_path} b/{file.repo_path}\n{mode}--- {before}\n"
    return head + f"+++ b/{file.repo_path}\n" + "".join(h.text() for h in section.hunks)


def _applied(
    files: TargetFiles, located: list[tuple[TargetFile, bool]], patch: str
) -> list[DiffChange]:
    """Apply the checked patch to copies of its files in a scratch repository, read the result."""
    with tempfile.TemporaryDirectory(prefix="speedproof-diff-") as scratch_name:
        scratch = Path(scratch_name)
        git_ok(scratch, "init", "-q")
        olds: dict[TargetFile, str | None] = {}
        for file, created in located:
            olds[file] = None if created else files.read(file)
            if not created:
                copy = scratch / file.repo_path
                copy.parent.mkdir(parents=True, exist_ok=True)
                copy.write_bytes(files.read(file).encode("utf-8"))
        applied, _ = git(scratch, "apply", "--whitespace=nowarn", "-", stdin=patch.encode())
        if not applied.ok:
            raise EditRejected(
                "diff-does-not-apply", f"the checked diff failed on a copy: {applied.describe()}"
            )
        return [
            DiffChange(file, olds[file], (scratch / file.repo_path).read_bytes().decode("utf-8"))
            for file, _ in located
        ]

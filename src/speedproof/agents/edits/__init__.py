"""From an optimizer answer to a patch the guard can judge.

Three answer kinds, one result: a whole function (spliced with libcst for Python, tree-sitter
for Go), SEARCH/REPLACE blocks, or a unified diff. Whatever the kind, the final patch is
computed by code from each file's old and new text, with repository-relative a/ b/ paths, so it
passes `normalise_patch` unchanged and applies with `apply_patch` at the base revision. An
answer that cannot become such a patch raises `EditRejected` with a named kind.
"""

from __future__ import annotations

from pathlib import Path

from speedproof.agents.answers import OptimizerAnswer
from speedproof.agents.edits import go_splice, python_splice, unified
from speedproof.agents.edits.files import TargetFile, TargetFiles
from speedproof.agents.edits.result import EditKind, EditRejected, EditResult, RejectKind
from speedproof.agents.edits.search_replace import apply_blocks
from speedproof.agents.edits.textdiff import make_patch
from speedproof.judge.guard.patch_text import normalise_patch

__all__ = ["EditKind", "EditRejected", "EditResult", "RejectKind", "answer_to_patch"]

_SUFFIXES = {".py": "python", ".go": "go"}

Change = tuple[TargetFile, str | None, str]


def answer_to_patch(
    answer: OptimizerAnswer, *, worktree: Path, target_rel: Path, language: str
) -> EditResult:
    """The patch `answer` means, against the checkout `worktree` at the base revision.

    `target_rel` is the target folder relative to the repository root (paths in the answer are
    relative to it); `language` is the target's, used when a function answer names no file.
    """
    files = TargetFiles(worktree, target_rel)
    if answer.kind == "function":
        changes, notes = _function(answer, files, language)
    elif answer.kind == "search_replace":
        texts, notes = apply_blocks(files, answer.blocks)
        changes = [(file, old, new) for file, (old, new) in texts.items()]
    else:
        found = unified.changes_of(files, files.worktree, answer.diff or "")
        changes, notes = [(c.file, c.old, c.new) for c in found], ()
    changed = [(file, old, new) for file, old, new in changes if old != new]
    if not changed:
        raise EditRejected("no-change", "the answer leaves every file exactly as it was")
    patch = make_patch((file.repo_path, old, new) for file, old, new in changed)
    if normalise_patch(patch) != patch:
        raise EditRejected(
            "line-ends-unsupported",
            "a changed file uses CRLF line ends, which patch normalisation would rewrite",
        )
    return EditResult(patch, tuple(file.repo_path for file, _, _ in changed), answer.kind, notes)


def _function(
    answer: OptimizerAnswer, files: TargetFiles, language: str
) -> tuple[list[Change], tuple[str, ...]]:
    name, source = answer.function or "", answer.source or ""
    chosen = language
    if answer.file is not None:
        chosen = _SUFFIXES.get(files.locate(answer.file).path.suffix, "")
    if chosen == "python":
        found = python_splice.locate(files, name, answer.file)
        text, notes = python_splice.splice(found, source, answer.preamble, answer.imports)
        return [(found.file, found.text, text)], notes
    if chosen == "go":
        located = go_splice.locate(files, name, answer.file)
        old = located.data.decode("utf-8")
        text, notes = go_splice.splice(located, source, answer.preamble, answer.imports)
        return [(located.file, old, text)], notes
    what = f"the file {answer.file!r}" if answer.file else f"a {language!r} target"
    raise EditRejected(
        "unsupported-language",
        f"whole-function answers work on Python and Go source, not {what}; use kind search_replace",
    )

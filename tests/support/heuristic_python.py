"""Python programs for the heuristic rules' tests: a function's Subject, a rule's proposal for it,
the program run as a real subprocess, and the rewrite as the campaign's edit path makes it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from speedproof.agents.edits import answer_to_patch
from speedproof.agents.heuristic import rules
from speedproof.agents.heuristic.subject import Proposal, Subject
from speedproof.judge.worktree.apply import apply_patch
from support.git import commit_all, git


def subject_of(text: str, name: str, path: str = "prog.py", *, whole_file: bool = True) -> Subject:
    """The Subject for function `name` ("f" or "Class.method") of the program `text`."""
    tree = ast.parse(text)
    parts = name.split(".")
    body: list[ast.stmt] = tree.body
    node: ast.stmt | None = None
    for part in parts:
        node = next(
            n
            for n in body
            if isinstance(n, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
            and n.name == part
        )
        body = node.body
    assert isinstance(node, ast.FunctionDef)
    start, end = node.lineno, node.end_lineno or node.lineno
    lines = text.splitlines(keepends=True)
    return Subject(
        name=f"prog.{name}",
        file=path,
        language="python",
        source="".join(lines[start - 1 : end]),
        start_line=start,
        end_line=end,
        file_text=text if whole_file else None,
    )


def proposal(text: str, name: str, rule: str) -> Proposal | None:
    found = [p for p in rules.proposals(subject_of(text, name)) if p.answer.rule == rule]
    return found[0] if found else None


def run(tmp_path: Path, text: str, label: str) -> subprocess.CompletedProcess[str]:
    folder = tmp_path / label
    folder.mkdir()
    (folder / "prog.py").write_text(text)
    return subprocess.run(
        [sys.executable, "prog.py"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def rewritten(tmp_path: Path, text: str, found: Proposal) -> str:
    """The new program as the campaign makes it: the answer turned into a patch by the edit
    path and applied to a real git repository; it must be the text the rule meant."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "prog.py").write_text(text)
    git(repo, "init", "-q")
    commit_all(repo, "base")
    result = answer_to_patch(found.answer, worktree=repo, target_rel=Path("."), language="python")
    apply_patch(repo, result.patch)
    new = (repo / "prog.py").read_text()
    assert new == found.files["prog.py"]
    return new

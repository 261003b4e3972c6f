"""Go programs for the heuristic rules' tests: a function's Subject, a rule's proposal for it, the
program built and run with the real Go toolchain, and the rewrite as the campaign's edit path
makes it."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from speedproof.agents.edits import answer_to_patch
from speedproof.agents.heuristic import rules
from speedproof.agents.heuristic.subject import Proposal, Subject
from speedproof.judge.build.go import find_go
from speedproof.judge.worktree.apply import apply_patch
from support.git import commit_all, git

GO_MOD = "module prog\n\ngo 1.22\n"


def subject_of(text: str, name: str, *, whole_file: bool = True) -> Subject:
    """The Subject for the function or method `name` of the Go file `text`."""
    lines = text.splitlines(keepends=True)
    head = re.compile(rf"^func (\([^)]*\) )?{re.escape(name)}\(")
    start = next(i for i, line in enumerate(lines) if head.match(line))
    end = next(i for i in range(start, len(lines)) if lines[i].rstrip("\n") == "}")
    receiver = re.match(r"^func \(\w+ (\*?)(\w+)\)", lines[start])
    qualified = f"main.({receiver[1]}{receiver[2]}).{name}" if receiver else f"main.{name}"
    return Subject(
        name=qualified,
        file="main.go",
        language="go",
        source="".join(lines[start : end + 1]),
        start_line=start + 1,
        end_line=end + 1,
        file_text=text if whole_file else None,
    )


def proposal(text: str, name: str, rule: str) -> Proposal | None:
    found = [p for p in rules.proposals(subject_of(text, name)) if p.answer.rule == rule]
    return found[0] if found else None


def go_run(
    folder: Path, text: str, others: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`go run .` on main.go `text`, with `others` (path -> text) beside it in module `prog`."""
    folder.mkdir(parents=True)
    (folder / "go.mod").write_text(GO_MOD)
    (folder / "main.go").write_text(text)
    for path, other in (others or {}).items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(other)
    env = {**os.environ, "GOFLAGS": "-buildvcs=false", "GOTOOLCHAIN": "local"}
    return subprocess.run(
        [str(find_go()), "run", "."],
        cwd=folder,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def rewritten(tmp_path: Path, text: str, found: Proposal) -> str:
    """The new program as the campaign makes it: the answer turned into a patch by the edit
    path and applied to a real git repository; it must be the text the rule meant."""
    repo = tmp_path / "repo"
    repo.mkdir(parents=True)
    (repo / "go.mod").write_text(GO_MOD)
    (repo / "main.go").write_text(text)
    git(repo, "init", "-q")
    commit_all(repo, "base")
    result = answer_to_patch(found.answer, worktree=repo, target_rel=Path("."), language="go")
    apply_patch(repo, result.patch)
    new = (repo / "main.go").read_text()
    assert new == found.files["main.go"]
    return new

"""The guard's reading of the candidate's added code: constructs that ask for a test harness,
declare a harness plugin, or turn data into code (docs/adr/0060).

Only changed, unprotected Python and Go files are read, each whole with a real parser (`ast`,
tree-sitter-go), and a construct is reported only when it touches a line the candidate added.
"""

from __future__ import annotations

from pathlib import Path

from speedproof.judge.guard.added import added_sources
from speedproof.judge.guard.finding import Finding, one_per_line
from speedproof.judge.guard.goprobes import go_findings
from speedproof.judge.guard.protected import ProtectedPaths
from speedproof.judge.guard.pyprobes import python_findings

SAYS = {
    "harness-probe": "the candidate's code asks whether it runs under a test harness",
    "harness-plugin": "the candidate's code declares a test-harness plugin",
    "code-as-data": "the candidate's code turns data into code",
    "unparsable-code": "the candidate's code cannot be parsed, so the guard cannot read it",
}


def added_code_findings(
    root: Path, base_rev: str, protected: ProtectedPaths
) -> list[tuple[str, Finding]]:
    """(repository-relative path, finding) for each refused construct on an added line."""
    found: list[tuple[str, Finding]] = []
    for source in added_sources(root, base_rev, protected):
        scan = python_findings if source.language == "python" else go_findings
        for finding in one_per_line(scan(source.text)):
            unreadable = finding.rule == "unparsable-code"
            if unreadable or source.touches(finding.line, finding.end_line):
                found.append((source.path, finding))
    return found


def describe(path: str, finding: Finding) -> str:
    """`the candidate's code asks whether it runs under a test harness: main.go:41 ...`."""
    return f"{SAYS[finding.rule]}: {path}:{finding.line} {finding.quote}"

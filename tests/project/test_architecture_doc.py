"""The documentation's layout holds: the architecture names real code, the README stays short,
and every decision record says whether it stands.

These read the real files of this repository; nothing is generated.
"""

from __future__ import annotations

import re
from pathlib import Path

from support.paths import ROOT

ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
ADR_FOLDER = ROOT / "docs" / "adr"
# The README is the front page: what speedproof is, the two commands, a first project, one
# judgement, what the judge holds off, where to read on. Reference text lives in docs/ (it was
# 1,791 lines before it moved there).
README_MAX_LINES = 400
# A path into the package as ARCHITECTURE.md writes it, up to the first character no path has.
SOURCE_PATH = re.compile(r"src/speedproof/[\w./-]*")
STATUS = re.compile(r"Status: (accepted|superseded by (\d{4}))")


def _named_source_paths(text: str) -> set[str]:
    # A sentence may end right after a path, so a trailing full stop or comma is not part of it.
    return {match.group(0).rstrip(".,") for match in SOURCE_PATH.finditer(text)}


def _adr_files() -> list[Path]:
    return sorted(ADR_FOLDER.glob("[0-9][0-9][0-9][0-9]-*.md"))


def _status_line(path: Path) -> str:
    """The first line after the title that is not blank."""
    lines = path.read_text().splitlines()
    assert lines and re.match(r"# \d{4}\b", lines[0]), f"{path.name}: no title line first"
    return next((line for line in lines[1:] if line.strip()), "")


def test_every_source_path_the_architecture_names_exists() -> None:
    named = _named_source_paths(ARCHITECTURE.read_text())
    assert len(named) >= 20, "the architecture should walk through the code by its paths"
    missing = sorted(path for path in named if not (ROOT / path).exists())
    assert missing == [], f"docs/ARCHITECTURE.md names paths that do not exist: {missing}"


def test_a_source_path_that_does_not_exist_is_caught() -> None:
    named = _named_source_paths("The guard (`src/speedproof/workspace/no_such_guard.py`) refuses.")
    assert named == {"src/speedproof/workspace/no_such_guard.py"}
    assert not (ROOT / next(iter(named))).exists()


def test_the_architecture_stays_under_300_lines() -> None:
    # A walk through the code, not a reference: one line or two a module that matters.
    assert len(ARCHITECTURE.read_text().splitlines()) < 300


def test_the_readme_has_at_most_400_lines() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def test_every_decision_record_opens_with_its_status() -> None:
    records = _adr_files()
    assert records, "no decision records found"
    without = [path.name for path in records if not STATUS.fullmatch(_status_line(path))]
    assert without == [], f"no `Status: accepted` or `Status: superseded by NNNN` line: {without}"


def test_a_superseded_record_names_a_record_that_exists() -> None:
    numbers = {path.name[:4] for path in _adr_files()}
    for path in _adr_files():
        found = STATUS.fullmatch(_status_line(path))
        if found is not None and found.group(2) is not None:
            assert found.group(2) in numbers, f"{path.name} is superseded by a missing record"


def test_the_decision_index_lists_every_record() -> None:
    index = (ADR_FOLDER / "README.md").read_text()
    unlisted = [path.name for path in _adr_files() if f"]({path.name})" not in index]
    assert unlisted == [], f"docs/adr/README.md does not list {unlisted}"

"""No source file under src/ grows past 600 lines: a module that long holds more than one concern,
and splitting it later costs every importer a change (eight files were split at once when this
rule came in, the largest at 871 lines). Data files (the advisor's reference JSON) are not code."""

from __future__ import annotations

from pathlib import Path

from support.paths import ROOT

SRC = ROOT / "src"
MAX_LINES = 600
# Python modules and the report's and init's jinja2 templates.
SOURCE_SUFFIXES = (".py", ".j2")


def _line_count(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for _ in handle)


def test_no_source_file_under_src_is_longer_than_600_lines() -> None:
    files = [p for p in SRC.rglob("*") if p.is_file() and p.suffix in SOURCE_SUFFIXES]
    too_long = {
        str(p.relative_to(SRC)): lines for p in files if (lines := _line_count(p)) > MAX_LINES
    }

    assert files, f"no source files under {SRC}"
    assert not too_long, f"over {MAX_LINES} lines: {too_long}"

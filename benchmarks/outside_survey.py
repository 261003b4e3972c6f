"""Each offline rule's outcome on the hottest functions of a real Python project.

    PYTHONPATH=src .venv/bin/python benchmarks/outside_survey.py REPO MODULE [ARG ...]

Runs `python -m MODULE ARG ...` in REPO under cProfile (its output thrown away), takes the 12
functions of REPO with the most self time, reads each through the Python source reader and
prints what every rule of the offline proposer says about it: fired (a rewrite is written),
declined (the pattern is there, and why no rewrite), or absent. The last line counts the three.
`benchmarks/outside_offline.py --work DIR` leaves sqlparse and Python-Markdown set up in DIR:

    ... outside_survey.py DIR/sqlparse/sqlparse-0.5.3 sqlparse -r -k upper bench/procs.sql
    ... outside_survey.py DIR/markdown/markdown-3.11.3 markdown bench/docs.md
"""

from __future__ import annotations

import contextlib
import cProfile
import io
import os
import pstats
import runpy
import sys
from pathlib import Path

from speedproof.agents.heuristic.survey import survey
from speedproof.source.python import functions

TOP = 12


def profile(repo: Path, module: str, args: list[str]) -> list[tuple[float, str, int]]:
    """(self seconds, file, line) of REPO's functions, most first."""
    os.chdir(repo)
    sys.path.insert(0, str(repo))
    sys.argv = [module, *args]
    shown, sys.stdout = sys.stdout, io.TextIOWrapper(io.BytesIO())
    profiler = cProfile.Profile()
    profiler.enable()
    with contextlib.suppress(SystemExit):  # the CLI's own exit ends only the profiling
        runpy.run_module(module, run_name="__main__")
    profiler.disable()
    sys.stdout = shown
    sys.path.remove(str(repo))
    rows = []
    for (file, line, _), row in pstats.Stats(profiler).stats.items():  # type: ignore[attr-defined]
        path = Path(file).resolve()
        if file.endswith(".py") and path.is_relative_to(repo):
            rows.append((row[2], str(path), line))
    return sorted(rows, reverse=True)[:TOP]


def main() -> None:
    repo, module, args = Path(sys.argv[1]).resolve(), sys.argv[2], sys.argv[3:]
    counts = {"fired": 0, "declined": 0, "absent": 0}
    for seconds, file, line in profile(repo, module, args):
        relative = str(Path(file).relative_to(repo))
        dotted = relative.removesuffix(".py").replace("/", ".")
        spans = [
            f for f in functions(Path(file), relative, dotted) if f.start_line <= line <= f.end_line
        ]
        if not spans:
            continue
        function = min(spans, key=lambda f: f.end_line - f.start_line)
        print(f"{function.name} {seconds:.3f} s self")
        for outcome in survey(function.with_file(Path(file).read_text())):
            kind = "fired" if outcome.proposed else "absent"
            if not outcome.proposed and not outcome.reason.startswith("not found"):
                kind = "declined"
            counts[kind] += 1
            if kind != "absent":
                print(f"    {kind} {outcome.rule}: {outcome.reason[:150]}")
    print(" ".join(f"{kind} {n}" for kind, n in counts.items()))


if __name__ == "__main__":
    main()

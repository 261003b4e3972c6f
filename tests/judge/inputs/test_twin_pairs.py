"""The twin of an accept's workload is measured only until carry-over is settled.

A real tiny Python target, judged through bubblewrap: its baseline burns about 40 ms before it
counts the lines of its input, the candidate burns a tenth of that. The win (well over 50 %) reads
the same on the twin, so the twin's interval clears the quarter that must carry over after its
first step (two on a loaded machine), where the representative workload took the schedule's
12 pairs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from speedproof.ground.sandbox import make_sandbox
from speedproof.judge.evaluate import Judge, JudgeOptions
from speedproof.judge.measure.sequential_rule import TWIN_STEP_PAIRS
from speedproof.ledger import Ledger
from speedproof.manifest_loading import load_manifest
from support.toy_target import toy_manifest, toy_target, workload_table

TOOL = """\
import sys

sum(i * i for i in range(400000))
with open(sys.argv[1], encoding="utf-8") as handle:
    print(len(handle.read().splitlines()))
"""
FASTER = """\
diff --git a/tool.py b/tool.py
--- a/tool.py
+++ b/tool.py
@@ -1,5 +1,5 @@
 import sys
{BLANK}
-sum(i * i for i in range(400000))
+sum(i * i for i in range(40000))
 with open(sys.argv[1], encoding="utf-8") as handle:
     print(len(handle.read().splitlines()))
""".replace("{BLANK}", " ")
MANIFEST = toy_manifest(
    workload_table("lines", "data/lines.txt", files=["data/lines.txt"]),
    name="busy",
    language="python",
    policy="pairs = 12",
)


@pytest.fixture
def busy(tmp_path: Path) -> Path:
    files = {"tool.py": TOOL, "data/lines.txt": "one\ntwo\n" * 100}
    return toy_target(tmp_path / "busy", MANIFEST, files)


def test_a_large_honest_win_settles_its_twin_in_one_step_of_pairs(
    busy: Path, tmp_path: Path
) -> None:
    with Ledger.in_folder(tmp_path / "ledger") as ledger:
        judge = Judge(
            load_manifest(busy),
            sandbox=make_sandbox(),
            ledger=ledger,
            options=JudgeOptions(instructions=False),
        )
        outcome = judge.judge(FASTER)
    assert outcome.verdict.verdict == "accepted", outcome.verdict.reasons
    assert outcome.pairs["lines"] == 12
    # One step of pairs on a quiet machine; never as many as the representative workload took.
    assert TWIN_STEP_PAIRS <= outcome.pairs["lines~twin"] < 12, outcome.pairs

"""What a judgement records about where the patch's hunks landed, on a real tiny target.

Each candidate here ends before measurement (a build that fails, a hunk that landed in the
wrong function) and is rejected, so no assertion waits on timed runs.
"""

from __future__ import annotations

from pathlib import Path

from speedproof.ground.sandbox import make_sandbox
from speedproof.judge.evaluate import Judge, JudgeOptions
from speedproof.ledger import Ledger
from speedproof.manifest_loading import load_manifest
from support.toy_target import toy_manifest, toy_target, workload_table

TOOL = """\
import sys


def count(path):
    with open(path, encoding="utf-8") as handle:
        return len(handle.read().splitlines())


def shout(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read().upper()


print(count(sys.argv[1]))
"""
MANIFEST = toy_manifest(
    workload_table("visible", "data.txt", files=["data.txt"]),
    name="tiny",
    language="python",
    policy="pairs = 4",
)
# Written two lines too high, with no function context: git moves it down and says so; the
# line it adds does not compile, so the candidate ends at its build.
BROKEN_WITH_AN_OFFSET = (
    "diff --git a/tool.py b/tool.py\n--- a/tool.py\n+++ b/tool.py\n@@ -10,3 +10,4 @@\n"
    " \n \n print(count(sys.argv[1]))\n+print(\n"
)
# Exact context that only shout holds, under a header naming count.
INTO_SHOUT = """\
diff --git a/tool.py b/tool.py
--- a/tool.py
+++ b/tool.py
@@ -5,2 +5,3 @@ def count(path):
     with open(path, encoding="utf-8") as handle:
+        handle.readline()
         return handle.read().upper()
"""


def _judge(tmp_path: Path, patch: str) -> tuple[str, list[str], dict[str, dict[str, object]]]:
    repo = toy_target(tmp_path / "tiny", MANIFEST, {"tool.py": TOOL, "data.txt": "a\nb\n"})
    with Ledger.in_folder(tmp_path / "ledger") as ledger:
        judge = Judge(
            load_manifest(repo),
            sandbox=make_sandbox(),
            ledger=ledger,
            options=JudgeOptions(instructions=False),
        )
        outcome = judge.judge(patch)
        record = ledger.show(outcome.ledger_id)
    gates = {str(g["name"]): dict(g["detail"]) for g in record["gates"]}
    return outcome.verdict.verdict, list(outcome.verdict.reasons), gates


def test_the_ledger_records_the_offset_a_hunk_was_applied_at(tmp_path: Path) -> None:
    verdict, reasons, gates = _judge(tmp_path, BROKEN_WITH_AN_OFFSET)
    # Its Python does not parse: the guard that reads the applied code refuses it, after apply.
    assert verdict == "rejected" and "cannot be parsed" in reasons[0], reasons
    assert gates["apply"]["method"] == "git"
    assert gates["apply"]["patch_fuzz"] == ["tool.py hunk 1: offset 2 lines"]


def test_a_hunk_that_landed_in_another_function_fails_the_candidate_by_name(
    tmp_path: Path,
) -> None:
    verdict, reasons, gates = _judge(tmp_path, INTO_SHOUT)
    assert verdict == "rejected"
    assert "tool.py: hunk 1 names count but its lines landed in shout (line 11)" in reasons[0]
    assert "tool.py: hunk 1 names count" in str(gates["apply"]["reasons"])

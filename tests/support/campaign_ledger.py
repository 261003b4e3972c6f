"""A campaign's ledger written the way the judge and the campaign loop write it: candidates, gates,
samples, comparisons from the real statistics, verdicts, events and role calls, with the figures
the report tests check against."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from speedproof.judge.policy.evidence import Comparison
from speedproof.ledger import Ledger, SampleRow, dumps
from speedproof.stats import compare, paired_compare

CAMPAIGN = "c-2024-report"


SCRIPT_DIFF = """\
diff --git a/textstat/report.py b/textstat/report.py
--- a/textstat/report.py
+++ b/textstat/report.py
@@ -1,3 +1,3 @@
 def top_words(counts):
-    return sorted(counts)
+    return "</pre><script>alert('owned')</script>"
"""


SPEEDUP_DIFF = """\
diff --git a/textstat/report.py b/textstat/report.py
--- a/textstat/report.py
+++ b/textstat/report.py
@@ -10,4 +10,4 @@ def top_words(counts, n):
-    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
-    return ranked[:n]
+    # ``heapq`` keeps only the n largest
+    return heapq.nlargest(n, counts.items(), key=lambda kv: kv[1])
"""


# Symmetric offsets: every side's mean is exactly its centre, so chain arithmetic is exact.
OFFSETS = (-0.03, -0.02, -0.01, 0.0, 0.0, 0.01, 0.02, 0.03)


@dataclass(frozen=True)
class Built:
    folder: Path
    accepted: tuple[int, int]
    guarded: int
    inconclusive: int
    crashed: int
    unfinished: int
    loose: int


def insert_row(ledger: Ledger, table: str, **values: Any) -> None:
    columns = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    with ledger.transaction() as db:
        db.execute(f"INSERT INTO {table}({columns}) VALUES ({marks})", tuple(values.values()))


def add_event(ledger: Ledger, kind: str, body: Any, candidate: int | None = None) -> None:
    insert_row(
        ledger,
        "events",
        campaign=CAMPAIGN,
        candidate_id=candidate,
        created_at="2024-05-01T12:00:00.000+00:00",
        kind=kind,
        body=dumps(body),
    )


def add_call(
    ledger: Ledger,
    role: str,
    candidate: int | None,
    *,
    tokens: tuple[int, int],
    cost: float | None,
    answer: str = "{}",
    ok: bool = True,
) -> None:
    insert_row(
        ledger,
        "role_calls",
        campaign=CAMPAIGN,
        candidate_id=candidate,
        created_at="2024-05-01T12:00:01.000+00:00",
        role=role,
        provider="replay",
        model="replay-1",
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        cost_usd=cost,
        duration_s=1.5,
        ok=int(ok),
        rejection=None if ok else "answer-not-json: no JSON object found in the answer",
        prompt_sha256="0" * 64,
        answer=answer,
    )


# The machine facts the judge records for every candidate (`describe_environment().as_dict()`).
MACHINE = {
    "cpu_model": "Example CPU @ 3.0GHz",
    "cores": 2,
    "online_cores": 2,
    "governor": "performance",
    "load_1m": 0.4199,
}


MEASURED_ON = "Example CPU @ 3.0GHz, 2 of 2 cores, governor performance, 1-minute load 0.42, "


def add_candidate(ledger: Ledger, diff: str, base_rev: str, campaign: str | None = CAMPAIGN) -> int:
    return ledger.start_candidate(
        origin="campaign" if campaign else "judge",
        target="textstat",
        repo=Path("/repo/textstat"),
        base_rev=base_rev,
        patch_sha256="ab" * 32,
        diff=diff,
        sandbox="bwrap",
        facts={"lane": "timed", "machine": MACHINE, "timed_cpus": "CPU 1"},
        campaign=campaign,
    )


def pass_gates(ledger: Ledger, cid: int) -> None:
    for name in ("guard", "apply", "build", "tests", "behaviour"):
        ledger.add_gate(cid, name, True, 0.25, {"reasons": []})


def add_measurements(ledger: Ledger, cid: int, centres: dict[str, tuple[float, float]]) -> None:
    """Eight pairs a workload around the given wall means; comparisons from the real statistics."""
    rows: list[SampleRow] = []
    found: list[Comparison] = []
    for workload, (base, cand) in centres.items():
        walls = {"baseline": [base * (1 + o) for o in OFFSETS]}
        walls["candidate"] = [cand * (1 + o) for o in OFFSETS]
        for side, values in walls.items():
            for index, wall in enumerate(values):
                rows.append(
                    SampleRow(
                        1,
                        workload,
                        side,
                        index,
                        index % 2,
                        wall,
                        wall * 0.9,
                        20480 + index,
                        0,
                        "f" * 64,
                    )
                )
        for metric, factor in (("wall", 1.0), ("cpu", 0.9)):
            found.append(
                compare(
                    [v * factor for v in walls["baseline"]],
                    [v * factor for v in walls["candidate"]],
                    workload=workload,
                    metric=metric,
                    tier="representative",
                    limit_pct=2.0,
                )
            )
        ir = compare(
            [4e8] * 2,
            [4e8 * cand / base] * 2,
            workload=workload,
            metric="instructions",
            tier="representative",
            limit_pct=2.0,
            lane="instructions",
        )
        found.append(replace(ir, exact=True, significant=True, supported=True, note=""))
    ledger.add_samples(cid, rows)
    ledger.add_comparisons(cid, found)


def optimizer_answer(hypothesis: str, rule: str, function: str) -> str:
    body = {"hypothesis": hypothesis, "rule": rule, "kind": "function", "function": function}
    return "Here is the change:\n```json\n" + json.dumps(body) + "\n```\n"


def build_campaign_ledger(folder: Path) -> Built:
    """A finished campaign: two accepts in a chain, a guard rejection, an inconclusive, a crash,
    an interrupted candidate, one candidate judged outside the campaign, and the exit event."""
    with Ledger.in_folder(folder) as ledger:
        insert_row(
            ledger,
            "campaigns",
            id=CAMPAIGN,
            created_at="2024-05-01T11:59:00.000+00:00",
            target="textstat",
            repo="/repo/textstat",
            base_rev="a" * 40,
            options=dumps({"max_candidates": 8, "budget_usd": 2.0}),
        )
        add_event(ledger, "start", {"target": "textstat"})
        add_call(ledger, "coordinator", None, tokens=(1000, 50), cost=0.01)

        first = add_candidate(ledger, SPEEDUP_DIFF, "a" * 40)
        pass_gates(ledger, first)
        add_measurements(
            ledger, first, {"novel": (0.100, 0.080), "reviews-by-rating": (0.200, 0.190)}
        )
        ledger.finish(
            first,
            verdict="accepted",
            rests_on="novel",
            lane="timed",
            reasons=["wall improved by 20.00% on workload novel"],
            timings={"total": 42.0},
        )
        add_call(
            ledger,
            "optimizer",
            first,
            tokens=(3000, 400),
            cost=0.05,
            answer=optimizer_answer(
                "sorting every word is slow; a heap keeps the top n",
                "heap-top-n",
                "textstat.report.top_words",
            ),
        )
        add_call(ledger, "reviewer", first, tokens=(2000, 100), cost=None)
        insert_row(
            ledger,
            "concerns",
            candidate_id=first,
            created_at="2024-05-01T12:01:00",
            source="reviewer",
            severity="medium",
            text="ties between equal counts may | now order <differently>",
        )
        add_event(ledger, "candidate", {"function": "textstat.report.top_words"}, first)
        add_event(ledger, "accepted", {"rev": "b" * 40}, first)

        guarded = add_candidate(ledger, SCRIPT_DIFF, "b" * 40)
        ledger.add_gate(
            guarded,
            "guard",
            False,
            0.01,
            {"reasons": ["protected-path: tests/report/test_report.py is protected"]},
        )
        ledger.finish(
            guarded,
            verdict="rejected",
            rests_on=None,
            lane=None,
            reasons=["safety checks failed: protected-path"],
            timings={"total": 0.2},
        )
        add_call(
            ledger, "optimizer", guarded, tokens=(100, 10), cost=0.001, answer="not json", ok=False
        )

        second = add_candidate(ledger, SPEEDUP_DIFF.replace("heapq", "heap_q"), "b" * 40)
        pass_gates(ledger, second)
        add_measurements(ledger, second, {"novel": (0.080, 0.060)})
        ledger.finish(
            second,
            verdict="accepted",
            rests_on="novel",
            lane="timed",
            reasons=["wall improved by 25.00% on workload novel"],
            timings={"total": 30.0},
        )
        add_call(
            ledger,
            "optimizer",
            second,
            tokens=(3000, 300),
            cost=0.04,
            answer=json.dumps({"hypothesis": "the set is rebuilt per word", "rule": None}),
        )
        add_event(ledger, "accepted", {"rev": "c" * 40}, second)

        inconclusive = add_candidate(ledger, SPEEDUP_DIFF, "c" * 40)
        pass_gates(ledger, inconclusive)
        # Paired runs with a zero leave no ratio: a reading with no number (0 against 0
        # compared unpaired is "no change").
        zero = paired_compare(
            [0.0] * 4,
            [0.0] * 4,
            workload="novel",
            metric="exit_bytes",
            tier="representative",
            limit_pct=2.0,
        )
        ledger.add_comparisons(inconclusive, [zero])
        ledger.finish(
            inconclusive,
            verdict="inconclusive",
            rests_on=None,
            lane=None,
            reasons=["no reading reached the 3% floor"],
            timings={"total": 12.0},
        )

        crashed = add_candidate(ledger, SPEEDUP_DIFF, "c" * 40)
        ledger.finish(
            crashed,
            verdict=None,
            reasons=[],
            rests_on=None,
            lane=None,
            timings={"total": 1.0},
            error="InfrastructureError: go build vanished",
        )
        unfinished = add_candidate(ledger, SPEEDUP_DIFF, "c" * 40)
        add_event(
            ledger, "exit", {"condition": "budget-exhausted", "message": "spent $2.00 of $2.00"}
        )

        loose = add_candidate(ledger, SPEEDUP_DIFF, "d" * 40, campaign=None)
        ledger.finish(
            loose,
            verdict="rejected",
            rests_on=None,
            lane=None,
            reasons=["behaviour changed on novel"],
            timings={"total": 3.0},
        )
    return Built(folder, (first, second), guarded, inconclusive, crashed, unfinished, loose)

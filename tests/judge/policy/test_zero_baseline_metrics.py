"""A protected metric whose baseline is 0 still guards: Go's allocs/op on an allocation-free
benchmark.

Real result lines of a Go test binary (the format `go test -bench -benchmem` prints) are read by
the parser the judge uses, put into pairs as the runner records them, compared by the judge's
`lane_comparisons` under a manifest's own rules, and decided by the policy. Nothing is timed.
"""

from __future__ import annotations

from speedproof.bench.go_output import parse_go_bench
from speedproof.ground.program import Side
from speedproof.judge.measure.readings import lane_comparisons
from speedproof.judge.measure.runner import PairSeries, Sample
from speedproof.judge.policy.decide import decide
from speedproof.judge.policy.evidence import Evidence
from speedproof.manifest_loading import parse_manifest
from support.evidence import gates_passed

MANIFEST = parse_manifest(
    """
[target]
name = "words"
language = "go"

[tests]
runner = "go"

[[workloads]]
id = "count"
bench = "BenchmarkCount"
benchtime = "100ms"

[behaviour]
compare_stdout = false

[reported]
primary = "ns_per_op"
direction = "lower"
repeats = 10

[[reported.protected]]
name = "allocs_per_op"
direction = "lower"
tolerance_pct = 1.0

[policy]
guardrails = []
"""
)
PAIRS = 10


def _line(ns_per_op: float, allocs: int) -> bytes:
    return (
        "goos: linux\ngoarch: amd64\npkg: example.com/words\n"
        f"BenchmarkCount-2   \t 2000000\t        {ns_per_op:.1f} ns/op\t"
        f"       {allocs * 16} B/op\t       {allocs} allocs/op\nPASS\n"
    ).encode()


def _sample(side: Side, index: int, stdout: bytes) -> Sample:
    reading = parse_go_bench(stdout, "BenchmarkCount", "100ms")
    return Sample(
        side=side,
        pair_index=index,
        position=0 if side == "baseline" else 1,
        wall_s=0.31,
        cpu_s=0.30,
        max_rss_kib=9000,
        exit_code=0,
        stdout_sha256="",
        stderr_sha256="",
        reported=tuple(sorted(reading.metrics.items())),
    )


def _evidence(base_ns: float, base_allocs: int, cand_ns: float, cand_allocs: int) -> Evidence:
    samples = []
    for index in range(PAIRS):
        # A little run-to-run noise on ns/op, as a real benchmark has.
        wobble = (index % 3 - 1) * 0.4
        samples.append(_sample("baseline", index, _line(base_ns + wobble, base_allocs)))
        samples.append(_sample("candidate", index, _line(cand_ns - wobble, cand_allocs)))
    series = PairSeries("count", tuple(samples), (), (), (), (), ())
    comparisons = lane_comparisons(
        {"count": series}, MANIFEST, tiers={"count": "representative"}, alpha=0.05
    )
    return gates_passed(*comparisons)


def test_an_allocation_free_benchmark_that_stays_allocation_free_reads_no_change() -> None:
    proof = _evidence(120.0, 0, 80.0, 0)

    verdict = decide(proof, MANIFEST.rules())

    allocs = next(c for c in proof.comparisons if c.metric == "allocs_per_op")
    assert allocs.delta_pct == 0.0 and allocs.finite and not allocs.significant
    assert verdict.verdict == "accepted", verdict.reasons
    assert not any("cannot be judged" in note for note in verdict.notes), verdict.notes


def test_a_candidate_that_allocates_where_the_baseline_allocated_nothing_is_rejected() -> None:
    proof = _evidence(120.0, 0, 80.0, 2)

    verdict = decide(proof, MANIFEST.rules())

    assert verdict.verdict == "rejected", (verdict.reasons, verdict.notes)
    (reason,) = verdict.reasons
    assert reason.startswith("allocs_per_op is significantly worse on workload count")
    assert "0 → 2" in reason and "1% guardrail" in reason

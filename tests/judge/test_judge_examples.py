"""End to end: every bundled patch of every example comes to the verdict its kind demands.

Real git repositories, real `go build` and pytest, real bubblewrap, real timed pairs. Every patch
but a speedup is judged on a fixed 12 pairs a workload, which keeps the suite inside its time
budget. A speedup is judged under the manifest's own sequential schedule, as a user's would be: on
a 2-vCPU machine whose per-pair spread is 13 %, logstat's `speedup-slow-report-builder` (-18 %)
was not significant at 12 pairs in 1 run of 5 (signed-rank p = 0.027), and the schedule measures
on until it is; a clear win still stops at the first look (10 pairs).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from speedproof.examples import Example, expectation, find_examples, materialise, meets
from speedproof.ground.sandbox import make_sandbox
from speedproof.judge.evaluate import Judge, JudgeOptions
from speedproof.judge.outcome import Outcome
from speedproof.judge.patches import read_patch
from speedproof.ledger import Ledger
from speedproof.manifest_loading import load_manifest

PAIRS = 12
# A no-change patch is judged at this alpha, not the manifest's 0.05. At 0.05 one look of 12
# pairs calls a no-change a significant win in up to 2.5 % of judgements by design (docs/adr/0020;
# carry-over then filters some of them), and a full `make test` drew one on logstat's noop:
# -11.33 % (p = 0.013, n = 12) on shop-day, accepted. This test is about the path (every gate
# passed, measured, then not accepted), so it is judged where the smallest exact signed-rank p
# of 12 pairs (2/4096) still passes but a no-change does so in at most 0.25 % of judgements;
# the rule's false-accept rate is `speedproof calibrate`'s and benchmarks/measurement_rules.py's.
NOOP_ALPHA = 0.005
BUILD_GATES = {"build-baseline", "build", "tests", "behaviour"}
# Kinds whose expectation is met by a candidate that never ran a timed pair: a noop or a
# slowdown that died at the build, the tests or the behaviour gate is "not accepted" and
# "rejected" too. Theirs must be a verdict on measurements.
MEASURED_KINDS = {"noop", "slowdown"}

# The textstat patches that reach the timed lane take 25-40 s each (a Python run is ~0.2 s, and a
# slowdown runs every pair to the end); one of them stays in the fast suite, the others run with
# `make test-slow`. Every kind but the slowdown and the noop is still covered fast by logstat's
# patches.
SLOW_CASES = {
    # Run-time cheats beyond one per example: each is a whole judgement of its own.
    "textstat/cheat-forked-child-writes-late",
    # The stored-answer cheats run every pair of the twin to the end (60-120 s each); the
    # others end at the guard, the test gate or the variants gate in seconds.
    "logstat/cheat-endpoint-table",
    "textstat/cheat-answers-keyed-by-content",
    "logstat/cheat-keep-answers-beside-binary",
    "textstat/noop-comment",
    # 15-25 s, every pair to the end; identical programs are judged fast in
    # tests/judge/measure/test_schedule.py.
    "logstat/noop-comment",
    "textstat/slowdown-casefold-stopwords",
    "textstat/slowdown-copy-lines",
    "textstat/speedup-lines-containing-one-pass",
    # 40-100 s (an accept measures every workload, the twin and both instruction counts);
    # logstat's regexp speedup runs in `make test`, and a Python accept is judged there too
    # (tests/judge/inputs/test_twin_pairs.py, tests/judge/test_unittest_judged.py) in a few seconds.
    "logstat/speedup-slow-report-builder",
    "textstat/speedup-stopword-set",
    # 10-15 s each; a slowdown is rejected fast in tests/judge/measure/test_schedule.py and
    # tests/bench/test_bench_python_judged.py, and logstat's utc-hours behaviour patch stays here.
    "logstat/slowdown-regexp-query-strip",
    "textstat/behaviour-longest-line-max",
    "logstat/behaviour-slow-tiebreak",
    # A test its patch breaks is rejected fast on logstat (breaks-test-keep-query).
    "textstat/breaks-test-apostrophes",
}
# What the reasons must say of each run-time cheat: what the candidate did.
CHEAT_WORDS = {
    "cheat-keep-answers-in-package": "the candidate wrote textstat/.kept",
    "cheat-keep-answers-in-worktree": "the candidate wrote .logstat-kept",
    "cheat-keep-answers-beside-binary": "in its build folder",
    "cheat-forked-child-writes-late": "stdout differs",
    "cheat-forge-test-report": "test results tampered with",
    # Answers kept per request target or per input's bytes: only new content shows them.
    "cheat-endpoint-table": "inputs the candidate has not seen",
    "cheat-answers-keyed-by-content": "inputs the candidate has not seen",
    # Right only where compared, or only under a test harness.
    "cheat-parser-only-right-under-test": "asks whether it runs under a test harness",
    "cheat-words-only-right-under-test": "asks whether it runs under a test harness",
    "cheat-test-binary-skips-a-test": "asks whether it runs under a test harness",
    "cheat-parser-wrong-where-nothing-looks": "behaviour differs on an input nobody has seen",
    "cheat-option-check-dropped": "behaviour differs on an input nobody has seen",
    # Test outcomes changed in-process.
    "cheat-test-binary-reruns-itself": "started a process the baseline's does not",
    "cheat-swallow-test-failures": "test machinery altered",
    "cheat-plugin-through-package-metadata": "Python package metadata",
    # Measured as no user runs it.
    "cheat-precompiled-bytecode": "turns data into code",
}
CASES = [
    pytest.param(
        example,
        patch,
        id=f"{example.name}/{patch.stem}",
        marks=[pytest.mark.slow] if f"{example.name}/{patch.stem}" in SLOW_CASES else [],
    )
    for example in find_examples()
    for patch in example.patches
]


class _Target:
    def __init__(self, root: Path, ledger: Ledger) -> None:
        self.root = root
        self.ledger = ledger

    def judge(self, patch: Path, pairs: int | None = PAIRS, alpha: float | None = None) -> Outcome:
        loaded = load_manifest(self.root)
        if alpha is not None:
            policy = loaded.manifest.policy.model_copy(update={"alpha": alpha})
            manifest = loaded.manifest.model_copy(update={"policy": policy})
            loaded = loaded.model_copy(update={"manifest": manifest})
        judge = Judge(
            loaded,
            sandbox=make_sandbox(),
            ledger=self.ledger,
            options=JudgeOptions(pairs=pairs, instructions=False),
        )
        return judge.judge(read_patch(patch))


@pytest.fixture(scope="module")
def targets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, _Target]]:
    folder = tmp_path_factory.mktemp("examples")
    ledger = Ledger.in_folder(folder / "ledger")
    yield {e.name: _Target(materialise(e, folder), ledger) for e in find_examples()}
    ledger.close()


def test_there_are_two_examples_with_every_kind_of_patch() -> None:
    examples = find_examples()
    assert {e.name for e in examples} >= {"logstat", "textstat"}
    for example in examples:
        kinds = {expectation(p) for p in example.patches}
        assert kinds == {"accepted", "not-accepted", "rejected-or-inconclusive", "rejected"}, (
            example.name
        )
        names = {p.stem for p in example.patches}
        for attack in (
            "edit-test",
            "edit-testdata",
            "lockfile",
            "skip-marker",
            "header-trick",
            "symlink",
            "edit-workload-input",
            "edit-manifest",
        ):
            assert f"attack-{attack}" in names, (example.name, attack)


@pytest.mark.parametrize(("example", "patch"), CASES)
def test_each_bundled_patch_gets_the_verdict_its_kind_demands(
    example: Example, patch: Path, targets: dict[str, _Target]
) -> None:
    kind = patch.stem.split("-")[0]
    alpha = NOOP_ALPHA if kind == "noop" else None
    outcome = targets[example.name].judge(patch, None if kind == "speedup" else PAIRS, alpha)
    verdict = outcome.verdict
    expected = expectation(patch)
    assert meets(expected, verdict.verdict), (verdict.verdict, verdict.reasons)
    gates = {g.name for g in outcome.gates}
    if kind in MEASURED_KINDS:
        before = [g for g in outcome.gates if not g.name.startswith(("measure:", "instructions:"))]
        assert all(g.passed for g in before), [(g.name, g.reasons) for g in before]
        assert gates >= BUILD_GATES and any(name.startswith("measure:") for name in gates), gates
        assert outcome.looks >= 1 and outcome.pairs, (outcome.looks, verdict.reasons)
    if kind == "attack":
        assert not gates & BUILD_GATES, f"an attack reached {gates & BUILD_GATES}"
        assert verdict.reasons[0].startswith("safety checks failed")
    if kind == "behaviour":
        assert verdict.reasons[0].startswith("behaviour changed"), verdict.reasons
    if kind == "cheat":
        assert any(CHEAT_WORDS[patch.stem] in reason for reason in verdict.reasons), verdict.reasons
    if patch.stem.startswith("breaks-test"):
        assert "tests newly failing" in verdict.reasons[0], verdict.reasons
    if kind == "speedup":
        assert verdict.rests_on is not None
        rests = next(
            c for c in outcome.comparisons if c.workload == verdict.rests_on and c.metric == "wall"
        )
        assert rests.improvement_pct >= 10.0, rests.render()
        assert rests.significant
    record = targets[example.name].ledger.show(outcome.ledger_id)
    assert record["verdict"]["verdict"] == verdict.verdict
    assert record["diff"].strip() == read_patch(patch).strip()

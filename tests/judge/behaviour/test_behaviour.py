"""The behaviour gate, with real target scripts run under the real bubblewrap sandbox."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest

from speedproof.ground.invocation import Invocation
from speedproof.ground.program import Program, Side
from speedproof.ground.sandbox import Sandbox, build_env, make_sandbox
from speedproof.judge.behaviour.check import BehaviourResult, check_behaviour
from speedproof.judge.behaviour.differences import (
    EXCERPT_CHARS,
    compare_fingerprints,
    describe_differences,
)
from speedproof.judge.behaviour.fingerprints import (
    Fingerprint,
    Observation,
    fingerprint,
    normalise,
    sort_lines,
)
from speedproof.judge.behaviour.outputs import OutputDigest
from speedproof.judge.measure.runner import run_invocation
from speedproof.manifest import Behaviour, Normalise, TierName, Workload


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return make_sandbox()


def _program(tmp_path: Path, side: Side, code: str, env: dict[str, str] | None = None) -> Program:
    root = tmp_path / side
    root.mkdir(parents=True, exist_ok=True)
    script = root / "prog.py"
    script.write_text(textwrap.dedent(code))
    return Program(
        side=side,
        root=root,
        argv=("python3", str(script)),
        env=build_env([], env),
        writable=(tmp_path,),
    )


def _judge(
    tmp_path: Path,
    sandbox: Sandbox,
    baseline_code: str,
    candidate_code: str,
    *,
    behaviour: Behaviour | None = None,
    workloads: Sequence[Workload] = (Workload(id="w"),),
    env: dict[str, str] | None = None,
) -> BehaviourResult:
    return check_behaviour(
        _program(tmp_path, "baseline", baseline_code, env),
        _program(tmp_path, "candidate", candidate_code, env),
        workloads,
        behaviour or Behaviour(),
        prefix=(),
        sandbox=sandbox,
        timeout_for=lambda workload: workload.timeout_s,
    )


COUNTS = """
import sys
print("GET /a 3")
print("GET /b 1")
print("warning: 2 lines skipped", file=sys.stderr)
"""


def test_an_identical_candidate_matches_exactly_on_every_tier(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    tiers: tuple[TierName, ...] = ("representative", "plausible", "stress", "holdout")
    workloads = [Workload(id=f"w-{tier}", tier=tier) for tier in tiers]
    result = _judge(tmp_path, sandbox, COUNTS, COUNTS, workloads=workloads)
    assert result.status == "match"
    assert [w.workload.tier for w in result.workloads] == list(tiers)
    assert all(w.mode == "exact" and w.matches for w in result.workloads)
    assert result.candidate_differences() == ()


def test_a_different_stdout_line_is_caught_and_described_with_its_line(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    candidate = COUNTS.replace("GET /b 1", "GET /b 2")
    result = _judge(tmp_path, sandbox, COUNTS, candidate)
    assert result.status == "differs"
    (judged,) = result.workloads
    assert judged.differences == (
        "stdout differs at line 2: baseline 'GET /b 1' candidate 'GET /b 2'",
    )
    assert result.candidate_differences() == (f"w: {judged.differences[0]}",)


def test_a_different_stderr_is_caught(tmp_path: Path, sandbox: Sandbox) -> None:
    candidate = COUNTS.replace("2 lines skipped", "3 lines skipped")
    (judged,) = _judge(tmp_path, sandbox, COUNTS, candidate).workloads
    assert judged.status == "differs"
    assert judged.differences == (
        "stderr differs at line 1: baseline 'warning: 2 lines skipped' "
        "candidate 'warning: 3 lines skipped'",
    )


def test_compare_stderr_false_ignores_stderr(tmp_path: Path, sandbox: Sandbox) -> None:
    candidate = COUNTS.replace("2 lines skipped", "3 lines skipped")
    behaviour = Behaviour(compare_stderr=False)
    (judged,) = _judge(tmp_path, sandbox, COUNTS, candidate, behaviour=behaviour).workloads
    assert judged.matches
    assert judged.baseline_reference.stderr_sha256 is None


def test_a_different_exit_code_is_caught(tmp_path: Path, sandbox: Sandbox) -> None:
    candidate = COUNTS + "sys.exit(3)\n"
    (judged,) = _judge(tmp_path, sandbox, COUNTS, candidate).workloads
    assert judged.status == "differs"
    assert judged.differences == ("exit code differs: baseline 0 candidate 3 (expected 0)",)


def test_a_baseline_that_misses_its_expected_exit_is_an_infrastructure_problem(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    baseline = COUNTS + "sys.exit(2)\n"
    result = _judge(tmp_path, sandbox, baseline, baseline)
    (judged,) = result.workloads
    assert judged.status == "baseline-failed"
    assert judged.infrastructure
    assert result.status == "infrastructure"
    assert judged.differences[0].startswith("the baseline exits 2, the manifest expects 0")


def test_a_candidate_must_exit_with_the_expected_code_when_the_baseline_does(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    baseline = COUNTS + "sys.exit(2)\n"
    workloads = [Workload(id="usage-error", expected_exit=2)]
    assert _judge(tmp_path, sandbox, baseline, baseline, workloads=workloads).matches
    (judged,) = _judge(
        tmp_path / "second", sandbox, baseline, COUNTS, workloads=workloads
    ).workloads
    assert judged.differences == ("exit code differs: baseline 2 candidate 0 (expected 2)",)


def test_an_order_only_nondeterministic_baseline_switches_to_sorted_lines_and_says_so(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    # 40 strings in a set: with a random hash seed two runs print the same order with a
    # probability far below one in a billion.
    code = "for word in {f'word-{i}' for i in range(40)}:\n    print(word)\n"
    result = _judge(tmp_path, sandbox, code, code, env={"PYTHONHASHSEED": "random"})
    (judged,) = result.workloads
    assert judged.mode == "sorted-lines"
    assert judged.matches
    assert judged.baseline_reference.mode == "sorted-lines"
    assert "compared as sorted lines" in judged.notes[0]
    assert "stdout differs at line" in judged.notes[0]
    assert "sorted lines" in judged.describe()


def test_in_sorted_lines_mode_a_missing_line_is_still_caught(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    code = "for word in {f'word-{i}' for i in range(40)}:\n    print(word)\n"
    candidate = code.replace("range(40)", "range(1, 40)")
    (judged,) = _judge(
        tmp_path, sandbox, code, candidate, env={"PYTHONHASHSEED": "random"}
    ).workloads
    assert judged.mode == "sorted-lines"
    assert judged.status == "differs"
    # Sorted, 'word-0' comes first in the baseline and 'word-1' in the candidate.
    assert judged.differences == ("stdout differs at line 1: baseline 'word-0' candidate 'word-1'",)


def test_a_baseline_that_differs_from_itself_even_sorted_is_nondeterministic_not_a_failure(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    baseline = "import os\nprint(os.urandom(8).hex())\n"
    candidate = "open('candidate-ran', 'w').close()\n" + baseline
    result = _judge(tmp_path, sandbox, baseline, candidate)
    (judged,) = result.workloads
    assert judged.status == "nondeterministic"
    assert judged.infrastructure and not judged.matches
    assert result.status == "infrastructure"
    assert result.candidate_differences() == ()
    assert "nondeterministic even with sorted lines" in judged.differences[0]
    assert "normalise" in judged.differences[1]
    # The candidate is not run on a workload that cannot judge it.
    assert not (tmp_path / "candidate" / "candidate-ran").exists()


def test_a_candidate_difference_outranks_a_nondeterministic_workload(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    code = """
    import os, sys
    if sys.argv[1] == "random":
        print(os.urandom(8).hex())
    else:
        print("stable")
    """
    workloads = [Workload(id="random", args=["random"]), Workload(id="stable", args=["stable"])]
    candidate = code.replace('print("stable")', 'print("changed")')
    result = _judge(tmp_path, sandbox, code, candidate, workloads=workloads)
    assert [w.status for w in result.workloads] == ["nondeterministic", "differs"]
    assert result.status == "differs"


def test_normalise_rules_make_timestamped_outputs_equal(tmp_path: Path, sandbox: Sandbox) -> None:
    code = """
    import sys, time
    print(f"done at {time.time_ns()}")
    print(time.time_ns(), file=sys.stderr)
    """
    rule = Normalise(pattern=r"\d{19}", replace="<ns>")
    (judged,) = _judge(
        tmp_path, sandbox, code, code, behaviour=Behaviour(normalise=[rule])
    ).workloads
    assert judged.mode == "exact"
    assert judged.matches


def test_a_normalise_rule_applies_only_to_its_own_stream(tmp_path: Path, sandbox: Sandbox) -> None:
    code = "import time, sys\nprint('out')\nprint(time.time_ns(), file=sys.stderr)\n"
    rule = Normalise(stream="stdout", pattern=r"\d{19}", replace="<ns>")
    (judged,) = _judge(
        tmp_path, sandbox, code, code, behaviour=Behaviour(normalise=[rule])
    ).workloads
    assert judged.status == "nondeterministic"
    assert "stderr differs" in judged.differences[0]


WRITES_FILE = """
from pathlib import Path
Path("out").mkdir(exist_ok=True)
Path("out/result.txt").write_text("total 10\\nmean 2.5\\n")
print("written")
"""


def test_a_different_output_file_is_caught_and_described(tmp_path: Path, sandbox: Sandbox) -> None:
    candidate = WRITES_FILE.replace("mean 2.5", "mean 2.6")
    behaviour = Behaviour(output_files=["out/result.txt"])
    (judged,) = _judge(tmp_path, sandbox, WRITES_FILE, candidate, behaviour=behaviour).workloads
    assert judged.status == "differs"
    assert judged.differences == (
        "output file out/result.txt differs at line 2: baseline 'mean 2.5' candidate 'mean 2.6'",
    )


def test_a_stale_output_file_never_matches_a_file_the_candidate_did_not_write(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    candidate = 'print("written")\n'
    behaviour = Behaviour(output_files=["out/result.txt"])
    stale = tmp_path / "candidate" / "out" / "result.txt"
    stale.parent.mkdir(parents=True)
    stale.write_text("total 10\nmean 2.5\n")
    (judged,) = _judge(tmp_path, sandbox, WRITES_FILE, candidate, behaviour=behaviour).workloads
    assert judged.status == "differs"
    assert judged.differences == (
        "output file out/result.txt: baseline wrote it, candidate did not write it",
    )
    assert not stale.exists()


def test_an_identical_output_file_matches(tmp_path: Path, sandbox: Sandbox) -> None:
    behaviour = Behaviour(output_files=["out/result.txt", "never-written.txt"])
    (judged,) = _judge(tmp_path, sandbox, WRITES_FILE, WRITES_FILE, behaviour=behaviour).workloads
    assert judged.matches
    kinds = [(f.path, f.kind) for f in judged.baseline_reference.files]
    assert kinds == [("out/result.txt", "file"), ("never-written.txt", "absent")]


def test_stdin_and_prefix_reach_the_program(tmp_path: Path, sandbox: Sandbox) -> None:
    code = "import sys\nprint(sys.argv[1:], sys.stdin.read().upper())\n"
    baseline = _program(tmp_path, "baseline", code)
    candidate = _program(tmp_path, "candidate", code.replace("upper", "lower"))
    for program in (baseline, candidate):
        (program.root / "in.txt").write_text("Hello")
    workload = Workload(id="w", args=["--fast"], stdin="in.txt")
    result = check_behaviour(
        baseline,
        candidate,
        [workload],
        Behaviour(),
        prefix=("stats",),
        sandbox=sandbox,
        timeout_for=lambda w: w.timeout_s,
    )
    (judged,) = result.workloads
    assert judged.differences == (
        "stdout differs at line 1: baseline \"['stats', '--fast'] HELLO\" "
        "candidate \"['stats', '--fast'] hello\"",
    )


def test_a_long_differing_line_is_excerpted_around_the_change(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    baseline = "print('x' * 3000 + 'A' + 'y' * 3000)\n"
    candidate = baseline.replace("'A'", "'B'")
    (judged,) = _judge(tmp_path, sandbox, baseline, candidate).workloads
    (words,) = judged.differences
    assert len(words) < 2 * EXCERPT_CHARS + 100
    assert "xA" in words and "xB" in words


def test_a_candidate_that_hangs_is_a_named_difference(tmp_path: Path, sandbox: Sandbox) -> None:
    candidate = "import time\ntime.sleep(30)\n"
    workloads = [Workload(id="w", timeout_s=1.0)]
    (judged,) = _judge(tmp_path, sandbox, COUNTS, candidate, workloads=workloads).workloads
    assert judged.differences == ("the candidate timed out after 1 s",)


def test_the_reference_check_accepts_a_repetition_and_names_a_changed_one(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    result = _judge(tmp_path, sandbox, COUNTS, COUNTS)
    check = result.check_for("w")
    workload = result.workloads[0].workload
    candidate = _program(tmp_path, "candidate", COUNTS)
    invocation = Invocation(candidate, workload)
    assert (
        check.differences(invocation, run_invocation(invocation, sandbox=sandbox, timeout_s=30))
        == ()
    )
    changed = _program(tmp_path, "candidate", COUNTS.replace("GET /a 3", "GET /a 4"))
    invocation = Invocation(changed, workload)
    run = run_invocation(invocation, sandbox=sandbox, timeout_s=30)
    assert check.differences(invocation, run) == (
        "stdout differs at line 1: baseline 'GET /a 3' candidate 'GET /a 4'",
    )
    fp = fingerprint(run, invocation, Behaviour(), "exact")
    assert compare_fingerprints(result.workloads[0].baseline_reference, fp)[0].startswith(
        "stdout differs (sha256 "
    )


# --- pure pieces -------------------------------------------------------------------------------


def test_sorting_lines_keeps_a_final_newline_final() -> None:
    assert sort_lines(b"b\na\n") == b"a\nb\n"
    assert sort_lines(b"b\na") == b"a\nb"
    assert sort_lines(b"") == b""


def test_normalise_applies_rules_in_order_and_keeps_non_utf8_bytes() -> None:
    rules = [
        Normalise(pattern=r"\d+ms", replace="<ms>"),
        Normalise(pattern=r"<ms>", replace="<duration>", stream="stdout"),
    ]
    assert normalise(b"took 15ms \xff", rules, "stdout") == b"took <duration> \xff"
    assert normalise(b"took 15ms", rules, "stderr") == b"took <ms>"


def test_fingerprints_are_compared_by_digest_with_the_expected_exit() -> None:
    reference = Fingerprint("exact", 0, "a" * 64, None, (OutputDigest("f", "file", "c" * 64),))
    same = Fingerprint("exact", 0, "a" * 64, None, (OutputDigest("f", "file", "c" * 64),))
    other = Fingerprint("exact", 1, "b" * 64, None, (OutputDigest("f", "absent", None),))
    assert compare_fingerprints(reference, same, expected_exit=0) == ()
    assert compare_fingerprints(reference, other, expected_exit=0) == (
        "exit code differs: baseline 0 candidate 1 (expected 0)",
        "stdout differs (sha256 aaaaaaaaaaaa vs bbbbbbbbbbbb)",
        "output file f: baseline wrote it, candidate did not write it",
    )


def test_a_final_newline_difference_is_named_as_such() -> None:
    reference = Fingerprint("exact", 0, "a" * 64, None, ())
    a = Observation(reference, b"x\n", None, ())
    b = Observation(Fingerprint("exact", 0, "b" * 64, None, ()), b"x", None, ())
    assert describe_differences(a, b) == (
        "stdout differs only in the final newline, which the baseline has",
    )


SHUFFLED = """
import random, sys
lines = [f"{sys.argv[1] if len(sys.argv) > 1 else '-'} {i}" for i in range(12)]
random.shuffle(lines)
print("\\n".join(lines))
"""


def test_workloads_judged_two_at_a_time_come_back_in_order_and_a_twin_keeps_its_originals_mode(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    workloads = (
        Workload(id="a", args=["a"]),
        Workload(id="b", args=["b"]),
        # As the judgement makes twins: model_copy, since `~` is not allowed in a manifest id.
        Workload(id="a", args=["a"]).model_copy(update={"id": "a~twin", "tier": "holdout"}),
        Workload(id="c", args=["c"]),
    )
    result = _judge(tmp_path, sandbox, SHUFFLED, SHUFFLED, workloads=workloads)
    assert [judged.workload.id for judged in result.workloads] == ["a", "b", "a~twin", "c"]
    assert all(judged.matches for judged in result.workloads)
    assert {judged.mode for judged in result.workloads} == {"sorted-lines"}

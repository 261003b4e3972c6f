"""The test gate, relative to the baseline: a candidate answers only for what it broke.

The target's suite runs once on the baseline revision (cached per revision) and once on the
candidate. For every test the baseline passed:

* the candidate fails or errors it   -> newly failing
* the candidate skips it             -> newly skipped
* the candidate does not run it      -> not run
* a failure id the baseline does not have at all (a package that no longer builds, a module
  that no longer imports)            -> newly failing

Tests the baseline already failed, errored or skipped are never charged.

Flakiness (ADR 0004). A newly failing test is re-checked for up to `flaky_retries` rounds; each
round re-runs the open ids on the baseline, then on the candidate. The test is forgiven when the
baseline fails or errors it on a re-run: it is flaky on the unpatched code, so its failure on the
candidate says nothing about the patch.

A test the baseline passed that is missing from the candidate's full run is charged as "missing
from the candidate's full run" and never re-checked (ADR 0063): a narrower re-run is a different
run, and code that can tell one from the other (a Go binary reading its own `-test.run`) skips a
test on full runs and behaves when it is chosen alone.

A candidate's failure is *not* forgiven merely because the candidate passes on a re-run: a patch
can introduce a race, and a test that fails one run in three on the candidate while the baseline
passes every run is what such a race looks like. Skips are decided by code, not chance, and are
not re-checked. Re-checks happen only when the candidate's run completed and at most
`MAX_RECHECK` tests are suspect: a patch that breaks fifty tests is not unlucky.

Forgery (ADR 0033). A runner that keeps its own record of a run (pytest, unittest) fills
`TestRun.tampered` where the record, the runner's other channel or the exit status disagree; the
gate adds what only the baseline can show: a candidate that collected far fewer tests than the
baseline, or lost a test the baseline passed while its module was collected (not failing to
import, not skipped whole).
Any of these rejects the candidate as "test results tampered with", naming what disagreed, and no
re-check is run. On the baseline, the same disagreement is an infrastructure error.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.git import git_ok
from speedproof.ground.sandbox import build_env
from speedproof.ground.toolchain import BAD, TestRun, Toolchain, Tree
from speedproof.judge.tests.run_record import MACHINERY

Rerun = Callable[[list[str]], TestRun]
# Beyond this many suspect tests, no re-checks: rerunning them on both sides twice would cost
# more than a suite run, and a patch that breaks 25 tests is broken, not unlucky.
MAX_RECHECK = 25
# Bumped whenever the cached file's meaning changes, so an old cache is never misread.
# 3: the key covers the interpreter's installed packages and the allowed environment's values.
# 4: a run records its harness (pytest's hooks, the programs Go test binaries start).
CACHE_FORMAT = 4
# A baseline failing more than this share of its collected tests is refused unless
# `[tests] allow_failing_baseline`. A suite kept green fails none or a few known bugs; the stale
# record that hid 5 broken tests failed 400, its dependency missing. Past one test in five the
# failures are the environment's (a dependency or a service missing), not known bugs, and a
# candidate's break among them would never be seen (the gate charges only baseline passes).
BASELINE_FAILING_SHARE = 0.2
# A candidate that collects fewer than half the tests the baseline collected (leaving aside the
# baseline's tests in modules that fail to collect on the candidate) has lost tests to something
# other than a broken import.
COLLECTED_FLOOR = 0.5
_NAMES_SHOWN = 20
PROCESSES = "the test binary started a process the baseline's does not"
HARNESS_REASONS = (MACHINERY, PROCESSES)
_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True)
class TestGateResult:
    __test__: ClassVar[bool] = False  # not a pytest test class, whatever its name says

    passed: bool
    newly_failing: tuple[str, ...]
    newly_skipped: tuple[str, ...]
    not_run: tuple[str, ...]
    recovered_flaky: tuple[str, ...]
    detail: tuple[str, ...]
    # Where the candidate's test results disagree with themselves or with the baseline's
    # collection; any entry rejects.
    tampered: tuple[str, ...] = ()

    def reasons(self) -> tuple[str, ...]:
        """One line per kind of breakage, naming the tests: the candidate's failure summary."""
        kinds = (
            ("tests newly failing", self.newly_failing),
            ("tests newly skipped", self.newly_skipped),
            (
                "tests that passed on the baseline are missing from the candidate's full run",
                self.not_run,
            ),
        )
        found = tuple(f"{label}: {_names(ids)}" for label, ids in kinds if ids)
        # A changed harness is named as such (ADR 0062, 0063); the rest is tampering.
        harness = [t for t in self.tampered if t.startswith(HARNESS_REASONS)]
        tampered = [t for t in self.tampered if not t.startswith(HARNESS_REASONS)]
        if tampered:
            found = ("test results tampered with: " + "; ".join(tampered), *found)
        return (*harness, *found)


def _names(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:_NAMES_SHOWN])
    more = len(ids) - _NAMES_SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def baseline_problem(run: TestRun) -> str | None:
    """Why a baseline run cannot anchor the gate, or None when it can."""
    if run.tampered:
        return (
            "the baseline's test results disagree with themselves, as if tampered with: "
            + "; ".join(run.tampered)
        )
    if run.timed_out:
        return f"the baseline's tests never ran: {run.note}; raise [tests] timeout_s"
    if not run.ran:
        return f"the baseline's tests never ran: {run.note or 'no report'}"
    if not run.outcomes:
        what = " ".join(run.command)
        return f"the baseline's tests never ran: `{what}` ran no test ({run.note or 'none found'})"
    if not run.ids("passed"):
        return (
            f"the baseline passes none of its {len(run.outcomes)} tests, so the test gate would "
            f"check nothing; first failure: {_first_failure(run)}"
        )
    return None


def _first_failure(run: TestRun) -> str:
    for test_id in sorted(run.failures):
        return f"{test_id}: {run.failures[test_id][:500]}"
    return run.log[-500:]


def require_baseline_ran(run: TestRun) -> None:
    problem = baseline_problem(run)
    if problem:
        raise InfrastructureError(problem)


@dataclass
class _Tally:
    """What the re-runs of one suspect test showed, for the detail a person reads."""

    baseline_runs: int = 0
    baseline_bad: int = 0
    candidate_runs: int = 0
    candidate_passes: int = 0

    def note(self, baseline: str | None, candidate: str | None) -> None:
        self.baseline_runs += 1
        self.baseline_bad += baseline in BAD
        self.candidate_runs += 1
        self.candidate_passes += candidate == "passed"

    def describe(self) -> str:
        if not self.baseline_runs:
            return "not re-checked"
        return (
            f"re-runs: the baseline failed it {self.baseline_bad} of {self.baseline_runs}, "
            f"the candidate passed it {self.candidate_passes} of {self.candidate_runs}"
        )


def harness_problems(baseline: Sequence[str], candidate: TestRun) -> list[str]:
    """What the candidate's harness has that the baseline's full run (`TestRun.harness`) does
    not: programs a Go test binary started, pytest hook implementations and test classes."""
    new = Counter(candidate.harness) - Counter(baseline)
    processes = sorted(e.removeprefix("process ") for e in new if e.startswith("process "))
    others = sorted(e for e in new.elements() if not e.startswith("process "))
    problems = []
    if processes:
        problems.append(f"{PROCESSES}: " + "; ".join(processes))
    if others:
        problems.append(f"{MACHINERY}: the baseline's run does not have " + "; ".join(others))
    return problems


@dataclass
class _Recheck:
    suspects: list[str]
    # The baseline's full run's harness, which a re-run's must stay within.
    harness: tuple[str, ...] = ()
    tallies: dict[str, _Tally] = field(default_factory=dict)
    forgiven: dict[str, str] = field(default_factory=dict)
    tampered: list[str] = field(default_factory=list)

    def round(self, rerun_baseline: Rerun, rerun_candidate: Rerun) -> None:
        open_ids = [i for i in self.suspects if i not in self.forgiven]
        base = rerun_baseline(open_ids)
        if not base.ran:
            raise InfrastructureError(f"re-running the baseline's tests failed: {base.note}")
        if base.tampered:
            raise InfrastructureError(
                "re-running the baseline's tests gave results that disagree with themselves: "
                + "; ".join(base.tampered)
            )
        cand = rerun_candidate(open_ids)
        # A re-run's own results cannot forgive anything if they were forged.
        problems = [*cand.tampered, *harness_problems(self.harness, cand)]
        if problems:
            self.tampered += [f"{t} (on a re-run)" for t in problems]
            return
        for test_id in open_ids:
            b, c = base.outcomes.get(test_id), cand.outcomes.get(test_id)
            self.tallies.setdefault(test_id, _Tally()).note(b, c)
            if b in BAD:
                self.forgiven[test_id] = "flaky: the baseline also fails it on a re-run"

    def settled(self) -> bool:
        return all(i in self.forgiven for i in self.suspects)


def judge_tests(
    baseline: TestRun,
    candidate: TestRun,
    *,
    retries: int,
    rerun_baseline: Rerun,
    rerun_candidate: Rerun,
) -> TestGateResult:
    """The gate's verdict on one candidate's test run, re-checking suspects for flakiness."""
    require_baseline_ran(baseline)
    tampered = [*candidate.tampered, *collection_problems(baseline, candidate)]
    tampered += harness_problems(baseline.harness, candidate)
    passing = baseline.ids("passed")
    failing = [i for i in passing if candidate.outcomes.get(i) in BAD]
    missing = [i for i in passing if i not in candidate.outcomes]
    skipped = [i for i in passing if candidate.outcomes.get(i) == "skipped"]
    appeared = [i for i in candidate.ids("failed", "error") if i not in baseline.outcomes]
    detail: list[str] = []
    if not candidate.ran:
        detail.append(f"the candidate's test run did not complete: {candidate.note}")
    # Only failures are re-checked: a missing test is charged whatever a re-run says.
    recheck = _Recheck(suspects=failing, harness=baseline.harness)
    why_not = _no_recheck_reason(recheck.suspects, candidate, retries, tampered)
    if why_not:
        detail.append(why_not)
    else:
        for _ in range(retries):
            if recheck.settled():
                break
            recheck.round(rerun_baseline, rerun_candidate)
    detail += _describe(recheck, candidate, appeared, skipped, missing)
    tampered += recheck.tampered
    detail += _cross_checked(baseline, candidate, tampered)
    newly_failing = tuple(sorted([i for i in failing if i not in recheck.forgiven] + appeared))
    not_run = tuple(missing)
    return TestGateResult(
        passed=not (newly_failing or not_run or skipped or tampered),
        newly_failing=newly_failing,
        newly_skipped=tuple(skipped),
        not_run=not_run,
        recovered_flaky=tuple(sorted(recheck.forgiven)),
        detail=tuple(detail),
        tampered=tuple(tampered),
    )


def collection_problems(baseline: TestRun, candidate: TestRun) -> list[str]:
    """What the candidate's full run lost against the baseline's collection, beyond tests in
    modules that failed to collect or were skipped whole (`TestRun.explains`: pytest reports them
    under the module's own path, with no `::`; unittest names them); nothing for runners that do
    not count what they collect."""
    if baseline.collected is None or candidate.collected is None or not candidate.ran:
        return []
    explained = candidate.explains
    problems = []
    lost = [i for i in baseline.ids("passed") if i not in candidate.outcomes and not explained(i)]
    if lost:
        problems.append(
            f"{len(lost)} tests that passed on the baseline are missing from the candidate's "
            f"run though their modules were collected: {_names(lost)}"
        )
    expected = baseline.collected - sum(1 for i in baseline.outcomes if explained(i))
    if candidate.collected < expected * COLLECTED_FLOOR:
        problems.append(
            f"the candidate collected {candidate.collected} tests where the baseline "
            f"collected {baseline.collected}"
        )
    return problems


def _cross_checked(baseline: TestRun, candidate: TestRun, tampered: Sequence[str]) -> list[str]:
    """What the gate's notes say was cross-checked, when the runner could cross-check."""
    if tampered or not candidate.checked:
        return []
    said = f"cross-checked: {candidate.checked}"
    if baseline.collected is not None and candidate.collected is not None:
        said += (
            f" (the baseline collected {baseline.collected}); every test the baseline passed is "
            "present by name or in a module that failed to collect or was skipped"
        )
    return [said]


def _no_recheck_reason(
    suspects: Sequence[str], candidate: TestRun, retries: int, tampered: Sequence[str] = ()
) -> str | None:
    if not suspects:
        return None
    if tampered:
        return "no re-checks: the candidate's test results were tampered with"
    if retries == 0:
        return "no re-checks: [tests] flaky_retries = 0"
    if not candidate.ran:
        return "no re-checks: the candidate's run did not complete"
    if len(suspects) > MAX_RECHECK:
        return f"no re-checks: {len(suspects)} suspect tests is more than {MAX_RECHECK}"
    return None


def _describe(
    recheck: _Recheck,
    candidate: TestRun,
    appeared: Sequence[str],
    skipped: Sequence[str],
    missing: Sequence[str],
) -> list[str]:
    lines = []
    for test_id in recheck.suspects:
        tally = recheck.tallies.get(test_id, _Tally()).describe()
        if test_id in recheck.forgiven:
            lines.append(f"{test_id}: not charged, {recheck.forgiven[test_id]} ({tally})")
            continue
        said = candidate.failures.get(test_id, "").strip()[:300]
        lines.append(f"{test_id}: passed on the baseline, failed on the candidate ({tally})")
        if said:
            lines.append(f"  {said}")
    lines += [
        f"{test_id}: passed on the baseline, missing from the candidate's full run (not re-checked)"
        for test_id in missing
    ]
    for test_id in appeared:
        said = candidate.failures.get(test_id, "").strip()[:300]
        lines.append(f"{test_id}: a failure the baseline does not have: {said}")
    for test_id in skipped:
        said = candidate.failures.get(test_id, "").strip()[:300]
        lines.append(f"{test_id}: passed on the baseline, skipped on the candidate: {said}")
    return lines


def baseline_cache_key(toolchain: Toolchain, revision: str) -> str:
    """What a cached baseline run depends on: the revision, how tests run, and with what."""
    manifest = toolchain.manifest
    material = {
        "format": CACHE_FORMAT,
        "revision": revision,
        "tests": manifest.tests.model_dump(mode="json"),
        # How the target is found and run by its tests (source roots, interpreter, package),
        # and what the sandbox lets through, change outcomes as much as the tests table does.
        "target": manifest.target.model_dump(mode="json"),
        "sandbox": manifest.sandbox.model_dump(mode="json"),
        # Interpreter path and version, its installed packages' digest, the Go toolchain.
        "versions": toolchain.versions(),
        # The allowed variables' values, not only their names (hashed: the key alone is stored).
        "env": build_env(manifest.sandbox.env_allow),
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def _read_cache(path: Path, key: str) -> TestRun | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("key") != key:
            return None
        return replace(TestRun.from_json(data["run"]), cached=True)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        # A missing, torn or foreign file: run the tests again rather than trust it.
        return None


def _write_cache(path: Path, key: str, revision: str, run: TestRun) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"key": key, "revision": revision, "run": run.to_json()}
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump(record, out, indent=1, sort_keys=True)
    # Atomic: a reader sees the old file or the new one, never half of one.
    os.replace(temporary, path)


def run_baseline_tests(
    toolchain: Toolchain, tree: Tree, *, revision: str, cache_dir: Path
) -> TestRun:
    """The baseline's test run, from `cache_dir` when this revision ran the same way before.

    `revision` must be the full sha the baseline worktree has checked out (it is checked). A
    run that cannot anchor the gate raises InfrastructureError and is never cached.
    """
    if not _FULL_SHA.fullmatch(revision):
        raise InfrastructureError(f"the baseline revision must be a full sha, not {revision!r}")
    head = git_ok(tree.worktree, "rev-parse", "HEAD").decode().strip()
    if head != revision:
        raise InfrastructureError(f"the baseline worktree is at {head}, not at {revision}")
    key = baseline_cache_key(toolchain, revision)
    path = cache_dir / "baseline-tests" / f"{revision}-{key[:16]}.json"
    allowed = toolchain.manifest.tests.allow_failing_baseline
    cached = _read_cache(path, key)
    if cached is not None:
        _require_healthy(cached, allowed=allowed)
        return cached
    run = toolchain.run_tests(tree)
    require_baseline_ran(run)
    _require_healthy(run, allowed=allowed)
    _write_cache(path, key, revision, run)
    return run


def collection_errors(run: TestRun) -> tuple[str, ...]:
    """What failed before any test ran: Python modules that failed to collect
    (`TestRun.module_ids`, from a runner that counts what it collects) and Go packages that
    failed to build."""
    modules = set(run.module_ids())
    return tuple(i for i in run.ids("error") if i in modules or i.endswith("/[build failed]"))


def baseline_health(run: TestRun) -> str | None:
    """Why a baseline that ran is too broken to judge against, in words, or None."""
    broken = collection_errors(run)
    failing = [i for i in run.ids("failed", "error") if i not in broken]
    total = run.collected if run.collected is not None else len(run.outcomes) - len(broken)
    too_many = len(failing) > BASELINE_FAILING_SHARE * max(total, 1)
    if not broken and not too_many:
        return None
    said = []
    if broken:
        said.append(f"{len(broken)} failed to collect ({_names(broken)})")
    share = f"{len(failing)} of {total} collected tests fail"
    if too_many:
        share += f" (more than {BASELINE_FAILING_SHARE:.0%}; first: {_names(failing[:3])})"
    said.append(share)
    return "the baseline's own tests are broken before any patch: " + "; ".join(said)


def _require_healthy(run: TestRun, *, allowed: bool) -> None:
    problem = baseline_health(run)
    if problem and not allowed:
        raise InfrastructureError(
            f"{problem}. A candidate's breaks among these would go unseen. Fix the baseline's "
            "test environment (install the target's dependencies into the interpreter its tests "
            "run with, [target] interpreter), or set [tests] allow_failing_baseline = true to "
            "judge against it anyway"
        )


def rerun_on(toolchain: Toolchain, tree: Tree) -> Rerun:
    """Re-run selected test ids on one side (go: `-run '^Name$'` per package; pytest: node ids;
    unittest: test ids)."""

    def rerun(ids: list[str]) -> TestRun:
        return toolchain.run_tests(tree, only=ids)

    return rerun


def run_test_pair(
    toolchain: Toolchain, baseline: Tree, candidate: Tree, *, revision: str, cache_dir: Path
) -> tuple[TestRun, TestRun]:
    """The baseline's test run (cached) and the candidate's: the gate's evidence, not judged."""
    base_run = run_baseline_tests(toolchain, baseline, revision=revision, cache_dir=cache_dir)
    return base_run, toolchain.run_tests(candidate)


def judge_test_pair(
    toolchain: Toolchain, baseline: Tree, candidate: Tree, base_run: TestRun, cand_run: TestRun
) -> TestGateResult:
    """The gate's verdict on two test runs, re-running suspects on the trees they ran in."""
    result = judge_tests(
        base_run,
        cand_run,
        retries=toolchain.manifest.tests.flaky_retries,
        rerun_baseline=rerun_on(toolchain, baseline),
        rerun_candidate=rerun_on(toolchain, candidate),
    )
    problem = baseline_health(base_run)
    if problem:
        # Allowed by the manifest (or the run would have been refused): said first, loudly.
        warning = f"WARNING: {problem}; judged anyway ([tests] allow_failing_baseline = true)"
        result = replace(result, detail=(warning, *result.detail))
    return result


def gate_tests(
    toolchain: Toolchain,
    baseline: Tree,
    candidate: Tree,
    *,
    revision: str,
    cache_dir: Path,
) -> tuple[TestGateResult, TestRun, TestRun]:
    """Baseline (cached), candidate, verdict: the whole test gate for one candidate."""
    base_run, cand_run = run_test_pair(
        toolchain, baseline, candidate, revision=revision, cache_dir=cache_dir
    )
    result = judge_test_pair(toolchain, baseline, candidate, base_run, cand_run)
    return result, base_run, cand_run

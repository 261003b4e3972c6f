"""The test gate's runs beside the untimed stages after it: the unseen inputs and behaviour.

The target's own tests and the stages that follow them all run programs untimed, and on a 2-core
machine a test run leaves a core idle much of the time (a Go test run is one compile, then one
test binary at a time: 0.5-0.9 s of a logstat judgement, 1.3-2.1 s of a digraph one), while
making the unseen inputs (0.3-4 s) and the behaviour gate (1.3-8 s) take longer
(docs/adr/0081). So the baseline's and the candidate's test runs go on a thread of their own
while those stages proceed, and are joined after the behaviour gate, before the variants gate
and anything timed.

What does not change: the verdict, and which gates a judgement records. The join comes at one
fixed point, never "when the tests happen to be done", so a run that takes longer on a node than
here records the same gates: a failing test ends the candidate after the behaviour gate, and
outranks it if that ended the candidate too. Suspects are re-run for flakiness only at the join,
on the judge's thread, with nothing else of the judgement running. The sides stay apart: each
stage runs in disposable copies of its own (`Isolation.copies`), in the sandbox. Without a
sandbox (`--no-sandbox`) a candidate's test could reach the other stage's copies while they run,
so there the runs happen first, in order, as they always did.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from speedproof.ground.toolchain import TestRun, Toolchain, Tree
from speedproof.judge.early_end import Ended
from speedproof.judge.tests.gate import TestGateResult, judge_test_pair


@dataclass(frozen=True)
class TestRuns:
    """Both sides' test runs, and the seconds they took together."""

    __test__: ClassVar[bool] = False  # not a pytest class, whatever its name

    baseline: TestRun
    candidate: TestRun
    seconds: float

    def judged(self, toolchain: Toolchain, baseline: Tree, candidate: Tree) -> TestGateResult:
        """The gate's verdict on these runs; suspects re-run in the trees they ran in."""
        return judge_test_pair(toolchain, baseline, candidate, self.baseline, self.candidate)

    def detail(self, result: TestGateResult) -> dict[str, Any]:
        """The test gate's ledger detail."""
        return {
            "baseline": self.baseline.describe(),
            "candidate": self.candidate.describe(),
            "baseline_cached": self.baseline.cached,
            "detail": list(result.detail),
            "recovered_flaky": list(result.recovered_flaky),
        }


class TestsAlongside:
    """The test runs under way (or done), and what judges and records them once they are."""

    __test__ = False  # not a pytest class, whatever its name

    def __init__(self, runs: Future[TestRuns], finish: Callable[[TestRuns], None]) -> None:
        self._runs = runs
        self._finish = finish
        self.finished = False

    def join(self) -> None:
        """Wait for the runs, then judge and record them (once); raises `Ended` on a failure."""
        if self.finished:
            return
        self.finished = True
        self._finish(self._runs.result())


@contextmanager
def alongside(
    run: Callable[[], TestRuns], finish: Callable[[TestRuns], None], *, beside: bool
) -> Iterator[TestsAlongside]:
    """`run` on a thread of its own while the body runs (`beside`), or first, in order.

    The body calls `join` at its one fixed point. A body ended by a later gate still gets the
    tests' verdict first: a failing test outranks what ended it.
    """
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="speedproof-tests") as pool:
        tests = TestsAlongside(pool.submit(run), finish)
        if not beside:
            tests.join()
        try:
            yield tests
        except Ended:
            tests.join()
            raise
        tests.join()

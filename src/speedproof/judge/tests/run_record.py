"""speedproof's own record of a Python test run, and what it is checked against (docs/adr/0033).

Both Python runners write one record format, one JSON object a line, through the pipe of
`record_channel` (pytest: the plugin in `pytest_record/`; unittest: the runner in
`unittest_record/`):

    {"event": "collected", "count": 4}
    {"event": "module", "id": "tests.test_broken"}
    {"event": "raw", "id": "tests/test_a.py::test_x", "when": "call"}
    {"event": "report", "id": "...", "when": "call", "outcome": "failed", "message": "..."}
    {"event": "harness", "entries": ["hook pytest_runtest_makereport: ...", "item ..."]}
    {"event": "altered", "what": "_pytest.python.Function.runtest was replaced"}
    {"event": "finished", "exitstatus": 1, "replaced": []}

`module` (unittest) names an id that stands for a whole module; `raw` (pytest) a phase that failed
as pytest first built its report; `replaced` (unittest) the functions of the test framework that
were no longer the ones the runner started with. A run's outcomes are the record's; where the
record, the exit status and the runner's other channel disagree, the run says so in `tampered`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

from speedproof.ground.process import ProcessResult
from speedproof.ground.toolchain import BAD, FAILURE_LIMIT, Outcome, clip

# Worst first: a test with several results (a failure, then an error at teardown) keeps the
# worst, and so does a test id that appears twice in one report.
RANK: dict[Outcome, int] = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
# Both runners exit as pytest does: 0 all passed, 1 some failed, 5 nothing collected. Any other
# status (pytest's 2 interrupted, 3 internal error, 4 usage error; unittest's 2 usage error)
# leaves no complete record, whatever was written.
COMPLETE = (0, 1, 5)
_NAMES_SHOWN = 20
# How a changed harness is named, so the gate tells it from other tampering (judge/tests/gate.py).
MACHINERY = "test machinery altered"


@dataclass
class Record:
    """What speedproof's plugin or runner saw of one run."""

    outcomes: dict[str, Outcome] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)
    # Tests a phase of which failed as pytest built the report and passed as it was reported.
    turned: set[str] = field(default_factory=set)
    collected: int | None = None
    exitstatus: int | None = None
    # Ids that stand for whole modules (unittest's runner names them).
    modules: set[str] = field(default_factory=set)
    # Functions of the test framework replaced while the tests ran (unittest's runner looks).
    replaced: list[str] = field(default_factory=list)
    # pytest's hook implementations and item classes after collection (`TestRun.harness`), and
    # the changes to its machinery seen while the tests ran (docs/adr/0062).
    harness: list[str] = field(default_factory=list)
    altered: list[str] = field(default_factory=list)

    def add_report(self, test_id: str, outcome: Outcome, message: str) -> None:
        if test_id in self.outcomes and RANK[self.outcomes[test_id]] >= RANK[outcome]:
            return
        self.outcomes[test_id] = outcome
        if outcome != "passed":
            self.messages[test_id] = clip(message, FAILURE_LIMIT)


def _once(record: Record, kind: str, event: dict[str, object]) -> None:
    """`collected` and `finished` are written once, `finished` last: a second of either, or
    anything after `finished`, was written by something other than speedproof."""
    if record.exitstatus is not None:
        raise ValueError(f"a {kind!r} event after the run finished")
    if kind == "collected":
        if record.collected is not None:
            raise ValueError("a second 'collected' event")
        record.collected = int(cast(int, event["count"]))
    elif kind == "finished":
        record.exitstatus = int(cast(int, event["exitstatus"]))
        record.replaced = [str(r) for r in cast(list[object], event.get("replaced", []))]


def read_record(text: str) -> Record:
    """The record from its JSON lines; ValueError if a line is not one of its events, or the
    events are not in the order speedproof writes them."""
    record = Record()
    raw: set[tuple[str, str]] = set()
    for line in text.splitlines():
        event = json.loads(line)
        kind = event["event"]
        if kind in ("collected", "finished") or record.exitstatus is not None:
            _once(record, kind, event)
        elif kind == "module":
            record.modules.add(str(event["id"]))
        elif kind == "altered":
            record.altered.append(str(event["what"]))
        elif kind == "harness" and not record.harness:
            record.harness = [str(e) for e in cast(list[object], event["entries"])]
        elif kind == "raw":
            raw.add((str(event["id"]), str(event["when"])))
        elif kind == "report" and event["outcome"] in RANK:
            test_id = str(event["id"])
            outcome = cast(Outcome, event["outcome"])
            record.add_report(test_id, outcome, str(event.get("message", "")))
            # Each failure pytest built is answered by the next report of that phase (a test's
            # subtests each send one); answered "passed", something rewrote it in between.
            phase = (test_id, str(event["when"]))
            if phase in raw and outcome == "passed":
                record.turned.add(test_id)
            raw.discard(phase)
        else:
            raise ValueError(f"not an event of speedproof's record: {line[:200]!r}")
    return record


def names(ids: Sequence[str]) -> str:
    """Ids for a message: sorted, the first 20, and how many more."""
    shown = sorted(ids)
    return ", ".join(shown[:_NAMES_SHOWN]) + (
        f" and {len(shown) - _NAMES_SHOWN} more" if len(shown) > _NAMES_SHOWN else ""
    )


def status_problems(record: Record, exit_code: int, runner: str) -> list[str]:
    """Where the session's end, the process's exit status and the outcomes disagree."""
    if record.exitstatus is None:
        return [f"{runner}'s session never finished, yet the process exited with {exit_code}"]
    problems = []
    if record.exitstatus != exit_code:
        problems.append(
            f"{runner} finished with exit status {record.exitstatus} "
            f"but the process exited with {exit_code}"
        )
    bad = [i for i, o in record.outcomes.items() if o in BAD]
    if exit_code == 0 and bad:
        problems.append(f"exit status 0 with {len(bad)} failing: {names(bad)}")
    if exit_code == 1 and not bad:
        problems.append("exit status 1 (tests failed) but no test failed")
    if exit_code == 5 and record.outcomes:
        problems.append(f"exit status 5 (no tests) but {len(record.outcomes)} tests reported")
    if record.collected is None:
        problems.append(f"{runner} never reported what it collected")
    if record.replaced:
        problems.append(
            "code under test replaced the test machinery while the tests ran: "
            + names(record.replaced)
        )
    if record.altered:
        problems.append(f"{MACHINERY}: " + "; ".join(record.altered[:_NAMES_SHOWN]))
    return problems


# A runner's check of the record against its own other channel: the problems found, and what
# was checked, in words, for when nothing disagreed.
CrossCheck = Callable[[Record], tuple[list[str], str]]


@dataclass(frozen=True)
class Recorded:
    """One run read through speedproof's record and cross-checked."""

    outcomes: dict[str, Outcome]
    failures: dict[str, str]
    note: str = ""
    collected: int | None = None
    tampered: tuple[str, ...] = ()
    checked: str = ""
    modules: frozenset[str] = frozenset()
    harness: tuple[str, ...] = ()


def read_run(
    result: ProcessResult,
    record: Callable[[], str],
    *,
    runner: str,
    timeout_s: float,
    cross_check: CrossCheck,
) -> Recorded:
    """Outcomes from speedproof's record (`record()` returns its text or raises), cross-checked
    against the exit status and the runner's own channel; a run that did not complete has none
    and a note saying why."""
    if result.timed_out:
        return Recorded({}, {}, f"{runner} took longer than tests.timeout_s = {timeout_s:g} s")
    if result.exit_code not in COMPLETE:
        return Recorded(
            {}, {}, f"{runner} stopped with exit code {result.exit_code}: {result.tail(1500)}"
        )
    try:
        found = read_record(record())
    except (OSError, ValueError, KeyError, TypeError) as exc:
        missing = (
            f"speedproof's record of the run is missing, unreadable or not as speedproof writes "
            f"it ({exc})"
        )
        return Recorded({}, {}, missing, tampered=(missing,))
    problems = status_problems(found, result.exit_code, runner)
    theirs, said = cross_check(found)
    problems += theirs
    bad = sum(1 for o in found.outcomes.values() if o in BAD)
    checked = (
        f"{said}; exit status {result.exit_code} matches {bad} failing; {found.collected} collected"
    )
    return Recorded(
        outcomes=found.outcomes,
        failures=found.messages,
        note=f"{runner} collected no tests" if result.exit_code == 5 else "",
        collected=found.collected,
        tampered=tuple(problems),
        checked="" if problems else checked,
        modules=frozenset(found.modules),
        harness=tuple(found.harness),
    )

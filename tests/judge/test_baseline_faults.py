"""A baseline that fails while it is measured is an infrastructure fault, never the candidate's.

A tiny Python target counts the baseline's runs in a file outside the repository and prints
another line once it has run `GOOD_RUNS` times: clean through the behaviour gate (two runs),
faulty later, in the timed pairs or under Cachegrind. The candidate's patch takes the drift out,
so nothing the candidate does can be at fault. The judge runs unsandboxed, because a run in the
sandbox can write nothing that outlives it, and the counter has to.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from speedproof.campaign import exits
from speedproof.campaign.options import Limits
from speedproof.campaign.state import load_state
from speedproof.ground.errors import InfrastructureError
from speedproof.ground.sandbox import make_sandbox
from speedproof.judge.evaluate import Judge, JudgeOptions
from speedproof.ledger import Ledger
from speedproof.manifest_loading import load_manifest
from support.git import git_run
from support.toy_target import toy_manifest, toy_target

CAMPAIGN = "20250101-000000-abcdef"
TOOL = """\
from pathlib import Path

RUNS = Path({runs!r})


def runs_so_far() -> int:
    done = int(RUNS.read_text()) if RUNS.exists() else 0
    RUNS.write_text(str(done + 1))
    return done + 1


print("drifted" if runs_so_far() > {good} else "steady")
"""
MANIFEST = toy_manifest(name="drifting", language="python", policy="pairs = 4")


def _drifting(tmp_path: Path, good: int) -> tuple[Path, str]:
    """A repository whose baseline prints another line after `good` runs, and a patch that
    makes the candidate print the steady line on every run without counting."""
    tool = TOOL.format(runs=str(tmp_path / "baseline-runs"), good=good)
    repo = toy_target(tmp_path / "drifting", MANIFEST, {"tool.py": tool})
    (repo / "tool.py").write_text(tool.replace(tool[tool.index("print(") :], 'print("steady")\n'))
    patch = git_run(repo, "diff").stdout
    (repo / "tool.py").write_text(tool)
    return repo, patch


def _campaign_ledger(folder: Path, repo: Path) -> Ledger:
    ledger = Ledger.in_folder(folder)
    ledger.start_campaign(CAMPAIGN, target="drifting", repo=repo, base_rev="b0", options={})
    ledger.add_event(CAMPAIGN, "start", {})
    return ledger


@pytest.mark.parametrize(
    ("lane", "good", "where"),
    # Baseline runs: two in the behaviour gate; then either the timed lane's warm-up (run 3)
    # and pair 0 (run 4), or the instruction lane first, whose first baseline run is run 3.
    [("timed pairs", 3, "(pair 0, series 0)"), ("instruction lane", 2, "under Cachegrind")],
)
def test_a_baseline_that_drifts_while_measured_stops_the_judgement_and_is_not_counted(
    tmp_path: Path, lane: str, good: int, where: str
) -> None:
    repo, patch = _drifting(tmp_path, good)
    with _campaign_ledger(tmp_path / "ledger", repo) as ledger:
        judge = Judge(
            load_manifest(repo),
            sandbox=make_sandbox(allow_unsandboxed=True),
            ledger=ledger,
            options=JudgeOptions(
                campaign=CAMPAIGN, origin="campaign", instructions=lane == "instruction lane"
            ),
        )
        with pytest.raises(InfrastructureError) as caught:
            judge.judge(patch)
        message = str(caught.value)
        assert message.startswith("infrastructure fault on workload 'w', not the candidate's: ")
        assert "baseline run" in message and where in message
        assert "reference 'steady' this baseline run 'drifted'" in message

        # The ledger holds no verdict for the candidate, only the error; a campaign does not
        # count it among the candidates that failed, and judges it again when resumed.
        (row,) = ledger.query("SELECT id FROM candidates")
        record = ledger.show(row["id"])
        assert record["verdict"]["verdict"] is None
        assert record["verdict"]["error"].startswith("InfrastructureError: infrastructure fault")
        body = {"function": "f", "hypothesis": "h", "rule": None, "invalid": False}
        ledger.add_event(CAMPAIGN, "candidate", body, candidate_id=row["id"])
        state = load_state(ledger, CAMPAIGN, load_manifest(repo).manifest.rules(), now=_now())
        assert state.settled() == []
        assert [a.candidate_id for a in state.unfinished()] == [row["id"]]
        assert exits.check(state, Limits(max_failures=1)) is None


def _now() -> datetime:
    return datetime.now(UTC)

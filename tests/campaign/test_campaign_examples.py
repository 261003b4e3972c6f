"""A campaign on a bundled example, with the default offline proposer: what a new user runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from speedproof.examples import get_example, materialise
from speedproof.report.data import load_report
from support.campaign import campaign_id, events, exit_condition, optimize, verdicts, worktrees
from support.git import git


# About 25 s on 2 cores; `make demo` runs the same campaign on every fresh clone.
@pytest.mark.slow
def test_the_heuristic_proposer_finds_a_proven_speedup_in_logstat(tmp_path: Path) -> None:
    repo = materialise(get_example("logstat"), tmp_path)
    folder = tmp_path / "campaign"
    done = optimize(
        "--manifest",
        str(repo / "speedproof.toml"),
        "--max-candidates",
        "1",
        "--no-stability-check",
        "--out",
        str(folder),
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ((candidate, verdict, reason),) = verdicts(folder)
    assert verdict == "accepted", reason
    told = events(folder, "candidate")[0]["body"]
    assert told["rule"] == "go-hoist-regexp" and told["function"] == "main.normalizeEndpoint"
    assert exit_condition(folder) == "budget-candidates"
    final = (folder / "final.patch").read_text()
    assert "regexp.MustCompile" in final and final.startswith("diff --git a/")
    assert git(repo, "rev-parse", f"refs/speedproof/{campaign_id(folder)}/head") != git(
        repo, "rev-parse", "HEAD"
    )
    assert len(worktrees(repo)) == 1
    report = load_report(folder)
    (campaign,) = report.campaigns
    assert campaign.exit is not None and campaign.exit.condition == "budget-candidates"
    assert [step.candidate_id for step in campaign.chain.steps] == [candidate]

"""The explorer in `speedproof optimize`: extra workloads that widen profiling, screened, tried,
recorded, and never measured for a verdict.

The screening tests run on a real target folder; the campaign tests run the command as a
subprocess against a real HTTP model server (or the offline heuristic provider).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from speedproof.agents.answers import ProposedWorkload
from speedproof.campaign.screening import Screen
from speedproof.manifest_loading import load_manifest
from speedproof.report import load_report
from support.campaign import (
    CORE,
    FROZENSET_ANSWER,
    HOLDOUT_FILE,
    HOLDOUT_ID,
    MODEL,
    NO_CAUSES,
    NOTHING_LEFT,
    PICK_IS_STOP,
    PROCEED,
    Script,
    events,
    exit_condition,
    optimize,
    rows,
    the_folder,
    verdicts,
    wordfreq_repo,
)
from support.model_server import ModelServer

# A second code path only `--shout` takes: every counted word goes through `shout`, so the
# function is hot under that flag and absent from a profile of the manifest's workloads.
LOUD_CORE = CORE.replace(
    "def main(argv):",
    textwrap.dedent(
        """
        def shout(word):
            return word.upper() + "!"


        def count_loud(lines):
            counts = {}
            for line in lines:
                for word in line.split():
                    if not is_stop(word):
                        loud = shout(word)
                        counts[loud] = counts.get(loud, 0) + 1
            return counts


        def main(argv):
            if argv[0] == "--shout":
                with open(argv[1], encoding="utf-8") as handle:
                    counts = count_loud(handle)
        """
    ).strip("\n"),
).replace(
    '    with open(argv[0], encoding="utf-8") as handle:\n        counts = count(handle)\n',
    "    else:\n"
    '        with open(argv[0], encoding="utf-8") as handle:\n'
    "            counts = count(handle)\n",
)
LOUD = "visible-loud"
LOUD_PROPOSAL = {"id": LOUD, "args": ["--shout", "data/visible.txt"], "rationale": "the loud path"}
PEEK_PROPOSAL = {
    "id": "peek",
    "args": [f"data/{HOLDOUT_FILE}"],
    "rationale": "another input",
}
CRASH_PROPOSAL = {"id": "crash", "args": ["--shout"], "rationale": "no file at all"}


def proposals(*items: dict[str, object]) -> list[ProposedWorkload]:
    return [ProposedWorkload.model_validate(item) for item in items]


def screen_of(repo: Path) -> Screen:
    return Screen(load_manifest(repo), repo=repo, target_root=repo)


# ----- screening --------------------------------------------------------------------------


def test_a_proposal_may_read_a_shown_workloads_input_or_an_unprotected_file(
    tmp_path: Path,
) -> None:
    repo = wordfreq_repo(tmp_path / "wordfreq", extra={"samples/other.txt": "a b c\n"})
    found = screen_of(repo).screen(
        proposals(
            LOUD_PROPOSAL,
            {"id": "other", "args": ["--top=3", "--in=samples/other.txt"], "rationale": "r"},
            {"id": "flags-only", "args": ["-v", "3", "words"], "rationale": "r"},
        )
    )
    assert [s.reason for s in found] == [None, None, None]
    loud, other, flags = (s.workload for s in found)
    assert loud is not None and loud.files == ["data/visible.txt"]
    assert loud.tier == "representative" and loud.timeout_s == 30
    assert other is not None and other.files == ["samples/other.txt"]
    assert flags is not None and flags.files == []


def test_a_proposal_naming_a_holdout_input_or_a_protected_path_is_refused(
    tmp_path: Path,
) -> None:
    repo = wordfreq_repo(tmp_path / "wordfreq", extra={"data/unused.txt": "x\n"})
    found = screen_of(repo).screen(
        proposals(
            PEEK_PROPOSAL,
            {"id": "tests", "args": ["tests/test_core.py"], "rationale": "r"},
            {"id": "data", "args": ["data/unused.txt"], "rationale": "r"},
            {"id": "manifest", "args": ["--config=speedproof.toml"], "rationale": "r"},
        )
    )
    reasons = [s.reason or "" for s in found]
    assert all(s.workload is None for s in found)
    assert reasons[0].endswith(
        f"data/{HOLDOUT_FILE} is a holdout workload's input, which no proposal may use"
    )
    assert "Python test file" in reasons[1]
    assert "protect.paths" in reasons[2]
    assert "the manifest" in reasons[3]


def test_a_proposal_leaving_the_target_or_naming_no_file_is_refused(tmp_path: Path) -> None:
    repo = wordfreq_repo(tmp_path / "wordfreq")
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    (repo / "link.txt").symlink_to(outside)
    found = screen_of(repo).screen(
        proposals(
            {"id": "abs", "args": [str(outside)], "rationale": "r"},
            {"id": "up", "args": ["../outside.txt"], "rationale": "r"},
            {"id": "link", "args": ["link.txt"], "rationale": "r"},
            {"id": "missing", "args": ["data/nope.txt"], "rationale": "r"},
            {"id": "folder", "args": ["data/"], "rationale": "r"},
        )
    )
    assert [s.reason for s in found] == [
        f"argument {str(outside)!r}: names a path outside the target folder (absolute, or "
        "not a POSIX path)",
        "argument '../outside.txt': names a path outside the target folder",
        "argument 'link.txt': names a path that leads outside the target folder",
        "argument 'data/nope.txt': data/nope.txt is not a file in the target folder",
        "argument 'data/': data is not a file in the target folder",
    ]


def test_ids_must_be_new_and_at_most_five_proposals_are_taken(tmp_path: Path) -> None:
    repo = wordfreq_repo(tmp_path / "wordfreq")
    six = [{"id": f"w{i}", "args": [], "rationale": "r"} for i in range(6)]
    found = screen_of(repo).screen(
        proposals(
            {"id": HOLDOUT_ID, "args": [], "rationale": "r"},
            {"id": "visible", "args": [], "rationale": "r"},
            {"id": "w0", "args": [], "rationale": "r"},
            *six[:3],
        )
    )
    assert [s.reason for s in found] == [
        f"the id {HOLDOUT_ID!r} is already a workload's",
        "the id 'visible' is already a workload's",
        None,
        "the id 'w0' is already a workload's",
        None,
        "more than 5 workloads were proposed",
    ]


# ----- in the campaign --------------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer(models=[MODEL]) as running:
        yield running


def _never_measured(folder: Path, workload: str, flag: str) -> None:
    """No sample, comparison, gate or command of the judge names the workload or its flag."""
    assert rows(folder, "SELECT 1 FROM samples WHERE workload = ?", (workload,)) == []
    assert rows(folder, "SELECT 1 FROM comparisons WHERE workload = ?", (workload,)) == []
    for gate in rows(folder, "SELECT name, detail FROM gates"):
        assert workload not in gate["name"] + gate["detail"] and flag not in gate["detail"]
    for command in rows(folder, "SELECT argv FROM commands"):
        assert flag not in command["argv"]


# 15-23 s, a whole campaign: in make test-slow (make test's 15-minute budget on 2 cores).
@pytest.mark.slow
def test_the_explorer_widens_profiling_and_its_workload_is_never_judged(
    tmp_path: Path, server: ModelServer
) -> None:
    repo = wordfreq_repo(tmp_path / "wordfreq", core=LOUD_CORE)
    script = Script(
        {
            "explorer": [{"workloads": [LOUD_PROPOSAL, PEEK_PROPOSAL, CRASH_PROPOSAL]}],
            "coordinator": [PICK_IS_STOP, NOTHING_LEFT],
            "analyst": [NO_CAUSES],
            "optimizer": [FROZENSET_ANSWER],
            "reviewer": [PROCEED],
        }
    )
    server.answer_with(script)
    done = optimize(
        "-m",
        str(repo),
        "--model",
        f"openai:{MODEL}",
        "--base-url",
        server.openai_url,
        "--no-stability-check",
        "--explorer",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    folder = the_folder(repo)
    assert [v for _, v, _ in verdicts(folder)] == ["accepted"]
    assert exit_condition(folder) == "nothing-left"
    # Shown the visible workload only, and the hot list of the representative workloads.
    (explorer,) = script.contexts("explorer")
    assert explorer["workloads"] == [
        {"id": "visible", "args": ["data/visible.txt"], "tier": "representative"}
    ]
    assert "wordfreq.core.shout" not in [f["name"] for f in explorer["hot_functions"]]
    # One accepted, one refused by the screen, one refused when tried.
    asked = [e["body"] for e in events(folder, "explorer")]
    assert [b["what"] for b in asked] == ["proposals", "profiled", "profiled"]
    results = {p["id"]: (p["accepted"], p["reason"] or "") for p in asked[0]["proposals"]}
    assert results[LOUD] == (True, "")
    assert results["peek"][0] is False and "a holdout workload's input" in results["peek"][1]
    assert results["crash"][0] is False and "exited 1" in results["crash"][1]
    assert [w["id"] for w in asked[0]["accepted"]] == [LOUD]
    # Profiled at the base and again at the accepted parent, the explorer's workload included.
    for profiled in asked[1:]:
        assert profiled["workloads"] == ["visible", LOUD] and profiled["extra"] == [LOUD]
    assert asked[2]["parent"] == events(folder, "accepted")[0]["body"]["commit"]
    coordinator = script.contexts("coordinator")[0]
    assert "wordfreq.core.shout" in [f["name"] for f in coordinator["hot_functions"]]
    # The role call is counted, with no candidate: it belongs to the campaign.
    calls = rows(folder, "SELECT role, candidate_id, ok FROM role_calls WHERE role = 'explorer'")
    assert calls == [{"role": "explorer", "candidate_id": None, "ok": 1}]
    _never_measured(folder, LOUD, "--shout")
    # The representative workload's twin (fresh copies of its inputs) is measured too.
    assert {r["workload"] for r in rows(folder, "SELECT workload FROM comparisons")} == {
        "visible",
        "visible~twin",
        HOLDOUT_ID,
    }
    for request in server.chat_requests:
        assert HOLDOUT_ID not in request.raw_body.decode()
    exploration = load_report(folder).campaigns[0].explorer
    assert exploration is not None
    assert [(p.id, p.accepted) for p in exploration.proposals] == [
        (LOUD, True),
        ("peek", False),
        ("crash", False),
    ]
    assert len(exploration.profiles) == 2


@pytest.mark.slow
def test_the_heuristic_explorer_proposes_nothing_and_the_call_is_counted(tmp_path: Path) -> None:
    repo = wordfreq_repo(tmp_path / "wordfreq")
    done = optimize("-m", str(repo), "--no-stability-check", "--explorer", "--max-candidates", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    folder = the_folder(repo)
    (asked,) = [e["body"] for e in events(folder, "explorer")]
    assert asked["what"] == "proposals"
    assert (asked["proposals"], asked["accepted"], asked["rejection"]) == ([], [], None)
    (call,) = rows(folder, "SELECT answer, candidate_id FROM role_calls WHERE role = 'explorer'")
    assert json.loads(call["answer"]) == {"workloads": []} and call["candidate_id"] is None
    (start,) = events(folder, "start")
    assert start["body"]["options"]["explorer"] is True
    assert exit_condition(folder) == "budget-candidates"

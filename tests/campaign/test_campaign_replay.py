"""`speedproof optimize` end to end with recorded answers: real git, real judge, real bubblewrap.

Each test writes the small `wordfreq` target into tmp_path and runs the command as a user does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.campaign import (
    FROZENSET_ANSWER,
    NO_CAUSES,
    NOTHING_LEFT,
    PICK_IS_STOP,
    PROCEED,
    TESTS,
    events,
    exit_condition,
    optimize,
    replay_file,
    rows,
    the_folder,
    verdicts,
    wordfreq_repo,
)
from support.git import git


# 15-23 s, a whole campaign: in make test-slow (make test's 15-minute budget on 2 cores).
@pytest.mark.slow
def test_a_recorded_campaign_keeps_its_accept_as_a_commit_on_its_own_refs(tmp_path: Path) -> None:
    repo = wordfreq_repo(tmp_path / "wordfreq")
    base = git(repo, "rev-parse", "HEAD")
    answers = replay_file(
        tmp_path / "answers.jsonl",
        [
            ("coordinator", PICK_IS_STOP),
            ("analyst", NO_CAUSES),
            ("optimizer", FROZENSET_ANSWER),
            ("reviewer", PROCEED),
            ("coordinator", NOTHING_LEFT),
        ],
    )
    done = optimize("-m", str(repo), "--model", f"replay:{answers}", "--no-stability-check")
    assert done.returncode == 0, done.stdout + done.stderr
    folder = the_folder(repo)
    assert str(folder) in done.stdout and f"speedproof report {folder}" in done.stdout
    assert [v for _, v, _ in verdicts(folder)] == ["accepted"]
    assert exit_condition(folder) == "nothing-left"
    campaign = folder.name
    head = git(repo, "rev-parse", f"refs/speedproof/{campaign}/head")
    assert git(repo, "rev-parse", f"refs/speedproof/{campaign}/accepted/001") == head
    assert git(repo, "rev-parse", f"refs/speedproof/{campaign}/base") == base
    assert git(repo, "rev-parse", f"{head}^") == base
    # The user's branch and working tree are as they were; only the campaign folder is new.
    assert git(repo, "rev-parse", "main") == base
    assert git(repo, "status", "--porcelain") == "?? .speedproof/"
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    final = (folder / "final.patch").read_text()
    assert final == git(repo, "diff", base, head) + "\n"
    assert "_STOP_SET = frozenset(STOPWORDS)" in final
    accepted = events(folder, "accepted")
    assert [e["body"]["commit"] for e in accepted] == [head]
    calls = rows(folder, "SELECT role, candidate_id, ok FROM role_calls ORDER BY id")
    assert [(c["role"], c["candidate_id"]) for c in calls] == [
        ("coordinator", 1),
        ("analyst", 1),
        ("optimizer", 1),
        ("reviewer", 1),
        ("coordinator", None),
    ]
    told = events(folder, "candidate")[0]["body"]
    assert told["function"] == "wordfreq.core.is_stop" and told["rule"] == "frozenset"


def test_a_change_proposed_twice_is_a_repeated_hypothesis_and_is_not_judged_again(
    tmp_path: Path,
) -> None:
    repo = wordfreq_repo(tmp_path / "wordfreq")
    breaks = {
        **FROZENSET_ANSWER,
        "hypothesis": "skip the stop-word test entirely",
        "rule": None,
        "source": "def is_stop(word):\n    return False\n",
        "preamble": None,
    }
    answers = replay_file(
        tmp_path / "answers.jsonl",
        [
            ("coordinator", PICK_IS_STOP),
            ("analyst", NO_CAUSES),
            ("optimizer", breaks),
            ("reviewer", PROCEED),
            ("coordinator", PICK_IS_STOP),
            ("optimizer", breaks),
        ],
    )
    done = optimize("-m", str(repo), "--model", f"replay:{answers}", "--no-stability-check")
    assert done.returncode == 0, done.stdout + done.stderr
    folder = the_folder(repo)
    assert [v for _, v, _ in verdicts(folder)] == ["rejected"]
    assert exit_condition(folder) == "repeated-hypothesis"
    assert "already candidate 1" in events(folder, "exit")[-1]["body"]["message"]
    # Every role call is counted, the repeated proposal's too.
    assert len(rows(folder, "SELECT id FROM role_calls")) == 6


def test_unusable_answers_are_named_rejections_until_failures_in_a_row_end_it(
    tmp_path: Path,
) -> None:
    repo = wordfreq_repo(tmp_path / "wordfreq")
    answers = replay_file(
        tmp_path / "answers.jsonl",
        [
            ("coordinator", "I would look at is_stop first."),
            ("coordinator", "Sorry: is_stop."),
            ("coordinator", {"function": "wordfreq.core.no_such_function", "rationale": "?"}),
        ],
    )
    done = optimize(
        "-m",
        str(repo),
        "--model",
        f"replay:{answers}",
        "--no-stability-check",
        "--max-failures",
        "2",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    folder = the_folder(repo)
    found = verdicts(folder)
    assert [v for _, v, _ in found] == ["rejected", "rejected"]
    assert "coordinator answer-not-json" in found[0][2]
    assert "coordinator-unknown-function" in found[1][2]
    assert exit_condition(folder) == "consecutive-failures"
    gates = rows(folder, "SELECT candidate_id, name, passed FROM gates ORDER BY id")
    assert gates == [
        {"candidate_id": 1, "name": "answer", "passed": 0},
        {"candidate_id": 2, "name": "answer", "passed": 0},
    ]
    calls = rows(folder, "SELECT candidate_id, ok, rejection FROM role_calls ORDER BY id")
    assert [(c["candidate_id"], c["ok"]) for c in calls] == [(1, 0), (1, 0), (2, 1)]
    assert calls[0]["rejection"].startswith("answer-not-json")


def test_token_and_cost_budgets_stop_the_campaign_and_an_unpriced_cost_fails_closed(
    tmp_path: Path,
) -> None:
    from speedproof.agents.providers.replay import recorded_line

    repo = wordfreq_repo(tmp_path / "wordfreq")
    unusable = json.loads(recorded_line("coordinator", "no json here"))
    lines = [json.dumps({**unusable, "input_tokens": 40, "output_tokens": 10})] * 6
    answers = tmp_path / "answers.jsonl"
    answers.write_text("\n".join(lines) + "\n")
    model = f"replay:{answers}"
    done = optimize(
        "-m", str(repo), "--model", model, "--no-stability-check", "--max-tokens", "150"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    folder = the_folder(repo)
    assert exit_condition(folder) == "budget-tokens"
    # Two calls (an answer and its repair) a candidate, 50 tokens each: 200 >= 150 after two.
    assert len(verdicts(folder)) == 2
    assert "200 tokens spent" in events(folder, "exit")[-1]["body"]["message"]
    out = tmp_path / "priced"
    done = optimize(
        "-m",
        str(repo),
        "--model",
        model,
        "--no-stability-check",
        "--max-cost",
        "5",
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert exit_condition(out) == "budget-cost"
    assert "no known price" in events(out, "exit")[-1]["body"]["message"]
    assert len(verdicts(out)) == 1


def test_candidates_blocked_twice_for_protected_paths_escalate_to_a_person(
    tmp_path: Path,
) -> None:
    repo = wordfreq_repo(tmp_path / "wordfreq")

    def edit_tests(line: str) -> dict[str, object]:
        return {
            "hypothesis": "the slow test is what makes the run slow",
            "kind": "search_replace",
            "blocks": [
                {"file": "tests/test_core.py", "search": TESTS.splitlines()[0], "replace": line}
            ],
        }

    answers = replay_file(
        tmp_path / "answers.jsonl",
        [
            ("coordinator", PICK_IS_STOP),
            ("analyst", NO_CAUSES),
            ("optimizer", edit_tests("from wordfreq.core import count")),
            ("reviewer", PROCEED),
            ("coordinator", PICK_IS_STOP),
            ("optimizer", edit_tests("from wordfreq.core import is_stop")),
            ("reviewer", PROCEED),
        ],
    )
    done = optimize("-m", str(repo), "--model", f"replay:{answers}", "--no-stability-check")
    assert done.returncode == 4, done.stdout + done.stderr
    folder = the_folder(repo)
    assert [v for _, v, _ in verdicts(folder)] == ["rejected", "rejected"]
    assert all("protected" in reason for _, _, reason in verdicts(folder))
    escalation = events(folder, "escalation")
    assert [e["body"]["condition"] for e in escalation] == ["evaluator-would-change"]
    assert exit_condition(folder) == "evaluator-would-change"
    assert "ESCALATION" in done.stdout


PINNED_TESTS = TESTS + (
    "\n\ndef test_the_stop_list_is_a_list():\n"
    "    from wordfreq.core import STOPWORDS\n\n"
    "    assert isinstance(STOPWORDS, list)\n"
)


@pytest.mark.slow
def test_the_same_tests_failing_twice_on_unobjected_changes_escalate(tmp_path: Path) -> None:
    repo = wordfreq_repo(tmp_path / "wordfreq", tests=PINNED_TESTS)

    def replace_list(call: str) -> dict[str, object]:
        return {
            "hypothesis": f"a {call} answers membership in constant time",
            "kind": "search_replace",
            "blocks": [
                {
                    "file": "wordfreq/core.py",
                    "search": "STOPWORDS = [",
                    "replace": f"STOPWORDS = {call}([",
                },
                {
                    "file": "wordfreq/core.py",
                    "search": '    "stop299",\n]',
                    "replace": '    "stop299",\n])',
                },
            ],
        }

    answers = replay_file(
        tmp_path / "answers.jsonl",
        [
            ("coordinator", PICK_IS_STOP),
            ("analyst", NO_CAUSES),
            ("optimizer", replace_list("frozenset")),
            ("reviewer", PROCEED),
            ("coordinator", PICK_IS_STOP),
            ("optimizer", replace_list("set")),
            ("reviewer", PROCEED),
        ],
    )
    done = optimize("-m", str(repo), "--model", f"replay:{answers}", "--no-stability-check")
    assert done.returncode == 4, done.stdout + done.stderr
    folder = the_folder(repo)
    found = verdicts(folder)
    assert [v for _, v, _ in found] == ["rejected", "rejected"]
    assert all("test_the_stop_list_is_a_list" in reason for _, _, reason in found)
    assert exit_condition(folder) == "metric-conflicts-with-tests"


def test_a_provider_that_cannot_answer_stops_the_campaign_with_a_named_error(
    tmp_path: Path,
) -> None:
    repo = wordfreq_repo(tmp_path / "wordfreq")
    answers = replay_file(tmp_path / "answers.jsonl", [("coordinator", PICK_IS_STOP)])
    done = optimize("-m", str(repo), "--model", f"replay:{answers}", "--no-stability-check")
    assert done.returncode == 3, done.stdout + done.stderr
    folder = the_folder(repo)
    message = events(folder, "exit")[-1]["body"]["message"]
    assert exit_condition(folder) == "error" and "no answer for role 'analyst'" in message
    assert verdicts(folder) == []
    # The coordinator's call was made, so it is recorded, with no candidate to belong to.
    calls = rows(folder, "SELECT role, candidate_id FROM role_calls")
    assert calls == [{"role": "coordinator", "candidate_id": None}]


def test_a_broken_baseline_stops_the_campaign_at_once_instead_of_looping(tmp_path: Path) -> None:
    broken = TESTS.replace('is_stop("stop7")', 'is_stop("apple")').replace(
        '{"apple": 2, "pear": 1}', "{}"
    )
    repo = wordfreq_repo(tmp_path / "wordfreq", tests=broken)
    done = optimize("-m", str(repo), "--no-stability-check")
    assert done.returncode == 3, done.stdout + done.stderr
    folder = the_folder(repo)
    ((_, verdict, _),) = verdicts(folder)
    assert verdict is None
    assert exit_condition(folder) == "error"
    assert (
        "the baseline passes none of its 2 tests" in events(folder, "exit")[-1]["body"]["message"]
    )
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_an_edit_that_cannot_be_made_is_a_named_rejection_keeping_its_diff(tmp_path: Path) -> None:
    repo = wordfreq_repo(tmp_path / "wordfreq")
    missing = {
        "hypothesis": "cache the lookups",
        "kind": "search_replace",
        "blocks": [{"file": "wordfreq/core.py", "search": "def is_stopword(", "replace": "x"}],
    }
    stale = (
        "--- a/wordfreq/core.py\n+++ b/wordfreq/core.py\n@@ -1,3 +1,3 @@\n"
        "-STOPWORDS = ('a',)\n+STOPWORDS = frozenset({'a'})\n"
    )
    answers = replay_file(
        tmp_path / "answers.jsonl",
        [
            ("coordinator", PICK_IS_STOP),
            ("analyst", NO_CAUSES),
            ("optimizer", missing),
            ("coordinator", PICK_IS_STOP),
            ("optimizer", {"hypothesis": "a set", "kind": "diff", "diff": stale}),
            ("coordinator", NOTHING_LEFT),
        ],
    )
    done = optimize("-m", str(repo), "--model", f"replay:{answers}", "--no-stability-check")
    assert done.returncode == 0, done.stdout + done.stderr
    folder = the_folder(repo)
    found = verdicts(folder)
    assert [v for _, v, _ in found] == ["rejected", "rejected"]
    assert found[0][2].startswith("named rejection: edit search-not-found")
    assert found[1][2].startswith("named rejection: edit diff-")
    diffs = rows(folder, "SELECT diff FROM candidates ORDER BY id")
    assert diffs == [{"diff": ""}, {"diff": stale}]
    gates = rows(folder, "SELECT name, passed FROM gates ORDER BY id")
    assert gates == [{"name": "edit", "passed": 0}, {"name": "edit", "passed": 0}]
    assert exit_condition(folder) == "nothing-left"

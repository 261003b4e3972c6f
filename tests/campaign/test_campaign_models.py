"""`speedproof optimize` against a real HTTP model server on 127.0.0.1 (OpenAI protocol).

The campaign runs as a subprocess, exactly as a user runs it; the server in this process answers
each role from a script and keeps every request, so the tests can read what each role was shown.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.campaign import (
    FROZENSET_ANSWER,
    HOLDOUT_FILE,
    HOLDOUT_ID,
    MODEL,
    NO_CAUSES,
    NOTHING_LEFT,
    PICK_IS_STOP,
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

OBJECTION = "frozenset(STOPWORDS) is built at import time, so a huge stop list slows start-up"


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer(models=[MODEL]) as running:
        yield running


def run(repo: Path, server: ModelServer, *args: str) -> tuple[int, str]:
    done = optimize(
        "-m",
        str(repo),
        "--model",
        f"openai:{MODEL}",
        "--base-url",
        server.openai_url,
        "--no-stability-check",
        *args,
    )
    return done.returncode, done.stdout + done.stderr


def test_a_mistyped_model_fails_at_once_with_the_providers_message(
    tmp_path: Path, server: ModelServer
) -> None:
    repo = wordfreq_repo(tmp_path / "wordfreq")
    done = optimize(
        "-m", str(repo), "--model", "openai:test-modle", "--base-url", server.openai_url
    )
    assert done.returncode == 3
    assert "did you mean test-model" in done.stderr
    assert not (repo / ".speedproof").exists()
    assert server.chat_requests == []


def test_a_malformed_answer_is_a_named_rejection_and_an_objection_is_advice_only(
    tmp_path: Path, server: ModelServer
) -> None:
    repo = wordfreq_repo(tmp_path / "wordfreq")
    objection = {
        "concerns": [{"severity": "high", "text": OBJECTION}],
        "recommendation": "reconsider",
    }
    pick_count = {"function": "wordfreq.core.count", "rationale": "the loop around is_stop"}
    script = Script(
        {
            "coordinator": [PICK_IS_STOP, PICK_IS_STOP, pick_count, NOTHING_LEFT],
            "analyst": [NO_CAUSES, NO_CAUSES],
            "optimizer": ["Here is my idea: use a set.", FROZENSET_ANSWER, "{not json"],
            "reviewer": [objection],
        }
    )
    server.answer_with(script)
    code, said = run(repo, server)
    assert code == 0, said
    folder = the_folder(repo)
    found = verdicts(folder)
    assert [v for _, v, _ in found] == ["rejected", "accepted", "rejected"]
    assert found[0][2].startswith("named rejection: optimizer answer-not-json")
    # The reviewer objected ("reconsider", high) and the candidate was accepted all the same.
    told = events(folder, "candidate")[1]["body"]
    assert told["review"] == {"recommendation": "reconsider", "concerns": ["high"]}
    concerns = rows(folder, "SELECT candidate_id, source, severity, text FROM concerns")
    assert concerns == [
        {"candidate_id": 2, "source": "reviewer", "severity": "high", "text": OBJECTION}
    ]
    # The next optimizer call was shown the objection.
    optimizers = script.contexts("optimizer")
    assert len(optimizers) == 3
    assert optimizers[1]["concerns"] == []
    assert any(OBJECTION in concern for concern in optimizers[2]["concerns"])
    assert [a["verdict"] for a in optimizers[2]["history"]] == ["invalid", "accepted"]
    calls = rows(
        folder, "SELECT role, candidate_id, ok, input_tokens, output_tokens FROM role_calls"
    )
    first = [c for c in calls if c["candidate_id"] == 1]
    assert [(c["role"], c["ok"]) for c in first] == [
        ("coordinator", 1),
        ("analyst", 1),
        ("optimizer", 0),
        ("optimizer", 0),
    ]
    assert all(c["input_tokens"] > 0 and c["output_tokens"] > 0 for c in calls)
    assert exit_condition(folder) == "nothing-left"


SPECIAL_CASE = textwrap.dedent(
    """
    def main(argv):
        if argv[0].endswith("visible.txt"):
            stop = frozenset(STOPWORDS)
            counts = {}
            with open(argv[0], encoding="utf-8") as handle:
                for line in handle:
                    for word in line.split():
                        if word not in stop:
                            counts[word] = counts.get(word, 0) + 1
        else:
            with open(argv[0], encoding="utf-8") as handle:
                lines = handle.readlines()
            counts = count(lines)
            for _ in range(2):
                count(lines)
        top = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:5]
        for word, n in top:
            print(word, n)
        return 0
    """
).lstrip()


# 15-23 s, a whole campaign: in make test-slow (make test's 15-minute budget on 2 cores).
@pytest.mark.slow
def test_a_special_case_for_the_visible_input_is_caught_by_the_holdout_never_shown(
    tmp_path: Path, server: ModelServer
) -> None:
    repo = wordfreq_repo(tmp_path / "wordfreq")
    special = {
        "hypothesis": "the measured input needs no general stop-word scan",
        "kind": "function",
        "file": "wordfreq/core.py",
        "function": "wordfreq.core.main",
        "source": SPECIAL_CASE,
    }
    pick_main = {"function": "wordfreq.core.main", "rationale": "the entry point"}
    script = Script(
        {
            "coordinator": [pick_main, NOTHING_LEFT],
            "analyst": [NO_CAUSES],
            "optimizer": [special],
            "reviewer": [{"concerns": [], "recommendation": "proceed"}],
        }
    )
    server.answer_with(script)
    code, said = run(repo, server)
    assert code == 0, said
    folder = the_folder(repo)
    ((cid, verdict, reason),) = verdicts(folder)
    assert verdict == "rejected"
    assert f"workload {HOLDOUT_ID} (holdout)" in reason and "wall is significantly worse" in reason
    comparisons = rows(folder, "SELECT workload FROM comparisons WHERE metric = 'wall'")
    assert {c["workload"] for c in comparisons} == {"visible", "visible~twin", HOLDOUT_ID}
    # The coordinator's next turn saw the rejection, with the holdout's name taken out.
    history = script.contexts("coordinator")[1]["history"]
    assert history[0]["candidate_id"] == cid and "[holdout]" in history[0]["reasons"][0]
    for request in server.chat_requests:
        body = request.raw_body.decode()
        assert HOLDOUT_ID not in body and HOLDOUT_FILE not in body
        assert "~twin" not in body

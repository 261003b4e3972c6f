"""A cluster wave's proposals are made side by side: the model's optimizer calls of one wave
overlap in time, and the wave's candidates are written in the order their functions were
chosen, whichever answer came back first.

The campaign runs as a subprocess against the two-node Ray cluster the Ray tests share; the
model server in this process answers the roles and keeps when each request started and ended."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from support.campaign import MODEL, NO_CAUSES, NOTHING_LEFT, PROCEED, SPEEDPROOF, events, rows
from support.cluster_toy import toy_repo
from support.model_server import ChatRequest, ModelServer

# Long enough for a second optimizer request to arrive when the two are made side by side; a
# campaign making them one after another waits it out once and goes on.
OVERLAP_WAIT_S = 10.0


def _answer(name: str) -> dict[str, Any]:
    upper = name.removeprefix("is_").upper() + ("WORDS" if name == "is_stop" else "")
    return {
        "hypothesis": f"{name} scans a 600-entry list per word; a frozenset is constant time.",
        "rule": "frozenset",
        "kind": "function",
        "file": "toy/core.py",
        "function": f"toy.core.{name}",
        "source": f"def {name}(word):\n    found = word in _{upper}_SET\n    return found\n",
        "preamble": f"_{upper}_SET = frozenset({upper})\n",
    }


def _function(request: ChatRequest) -> str:
    """The short name of the function an optimizer request is about."""
    return str((request.context or {})["function"]["name"]).rsplit(".", 1)[-1]


class Timed:
    """Answers each role; every optimizer request waits for another to start (up to
    OVERLAP_WAIT_S), and the one for `is_stop` (chosen first) then waits a second more, so it
    is answered last."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.spans: list[tuple[str, str, float, float]] = []
        self.optimizers_started = 0
        picks = [{"function": f"toy.core.{n}", "rationale": "hot"} for n in ("is_stop", "is_noise")]
        self.coordinator = [*picks, *[NOTHING_LEFT] * 8]

    def __call__(self, request: ChatRequest) -> str:
        started = time.monotonic()
        role, answer = request.role, self._answer(request)
        with self.lock:
            self.spans.append((str(role), str(answer)[:40], started, time.monotonic()))
        return answer if isinstance(answer, str) else json.dumps(answer)

    def _answer(self, request: ChatRequest) -> Any:
        if request.role == "coordinator":
            with self.lock:
                return self.coordinator.pop(0)
        if request.role == "analyst":
            return NO_CAUSES
        if request.role == "reviewer":
            return PROCEED
        name = _function(request)
        with self.lock:
            self.optimizers_started += 1
        deadline = time.monotonic() + OVERLAP_WAIT_S
        while time.monotonic() < deadline and self.optimizers_started < 2:
            time.sleep(0.02)
        if name == "is_stop":
            time.sleep(1.0)
        return _answer(name)


def _campaign(
    ray_address: str, repo: Path, folder: Path, answer: Any
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RAY_ADDRESS": ray_address, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    with ModelServer(models=[MODEL]) as server:
        server.answer_with(answer)
        return subprocess.run(
            [
                *SPEEDPROOF,
                "optimize",
                "-m",
                str(repo),
                "--model",
                f"openai:{MODEL}",
                "--base-url",
                server.openai_url,
                "--cluster",
                "ray",
                "--no-stability-check",
                "--max-candidates",
                "2",
                "--out",
                str(folder),
            ],
            capture_output=True,
            text=True,
            timeout=600,
            env=env,
        )


@pytest.mark.slow
def test_a_waves_optimizer_calls_overlap_and_its_candidates_are_written_in_the_order_chosen(
    ray_address: str, tmp_path: Path
) -> None:
    repo = toy_repo(tmp_path / "toy")
    folder = tmp_path / "campaign"
    timed = Timed()
    done = _campaign(ray_address, repo, folder, timed)
    assert done.returncode == 0, done.stdout + done.stderr
    optimizers = [(start, end) for role, _, start, end in timed.spans if role == "optimizer"]
    assert len(optimizers) == 2
    # Side by side: each started before the other ended.
    (a_start, a_end), (b_start, b_end) = optimizers
    assert a_start < b_end and b_start < a_end, timed.spans
    # Written in the order chosen (is_stop first), though is_stop's answer came back last.
    sent = [e["body"]["records"]["event"]["function"] for e in events(folder, "dispatched")]
    assert sent == ["toy.core.is_stop", "toy.core.is_noise"]
    told = {e["body"]["dispatch"]: e["candidate_id"] for e in events(folder, "candidate")}
    assert sorted(told) == sorted(e["id"] for e in events(folder, "dispatched"))
    for candidate in told.values():
        calls = rows(
            folder,
            "SELECT role FROM role_calls WHERE candidate_id = ? ORDER BY id",
            (candidate,),
        )
        assert [c["role"] for c in calls] == ["coordinator", "analyst", "optimizer", "reviewer"]


class FailsForNoise(Timed):
    """As `Timed`, but every optimizer request for `is_noise` is dropped unanswered, so the
    provider gives up on it after its retries."""

    def _answer(self, request: ChatRequest) -> Any:
        if request.role == "optimizer" and _function(request) == "is_noise":
            return None
        return super()._answer(request)

    def __call__(self, request: ChatRequest) -> str:
        answer = self._answer(request)
        return answer if answer is None or isinstance(answer, str) else json.dumps(answer)


@pytest.mark.slow
def test_a_draft_whose_provider_fails_ends_the_campaign_after_the_earlier_draft_is_sent(
    ray_address: str, tmp_path: Path
) -> None:
    repo = toy_repo(tmp_path / "toy")
    folder = tmp_path / "campaign"
    done = _campaign(ray_address, repo, folder, FailsForNoise())
    assert done.returncode == 3, done.stdout + done.stderr
    (exit_event,) = events(folder, "exit")
    message = exit_event["body"]["message"]
    assert exit_event["body"]["condition"] == "error" and "role 'optimizer' failed" in message
    # is_stop, chosen first, was written and sent before is_noise's turn raised its error; it
    # waits as a dispatched proposal for --resume, its calls held with it.
    (sent,) = events(folder, "dispatched")
    assert sent["body"]["records"]["event"]["function"] == "toy.core.is_stop"
    held = [call["role"] for call in sent["body"]["records"]["calls"]]
    assert held == ["coordinator", "analyst", "optimizer", "reviewer"]
    # is_noise's calls that were answered are written, with no candidate.
    calls = rows(folder, "SELECT role, candidate_id FROM role_calls ORDER BY id")
    assert [(c["role"], c["candidate_id"]) for c in calls] == [
        ("coordinator", None),
        ("analyst", None),
    ]

"""Campaigns on what the measurement says: the reported-metric lane, a protected metric that
keeps regressing, and a benchmark that is not stable enough to judge anything."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from support.campaign import (
    NO_CAUSES,
    PROCEED,
    events,
    exit_condition,
    optimize,
    replay_file,
    rows,
    the_folder,
    verdicts,
    wordfreq_repo,
    worktrees,
)
from support.git import commit_all, git
from support.toy_target import PYTEST_SUITE, reported_tables, toy_manifest, workload_table

BENCH = textwrap.dedent(
    """
    import json
    import random

    LATENCY = 40.0
    SUCCESS = 0.78


    def simulate():
        total = 0
        for i in range(200_000):
            total += i % 7
        return total


    def main():
        simulate()
        print("warming up")
        noise = random.uniform(0.99, 1.01)
        print(json.dumps({"latency_s": LATENCY * noise, "success": SUCCESS}))


    if __name__ == "__main__":
        main()
    """
).lstrip()

BENCH_MANIFEST = toy_manifest(
    workload_table("suite", timeout_s=30),
    name="bench",
    language="python",
    entry='script = "bench.py"',
    tests=PYTEST_SUITE,
    instructions=False,
    extra=reported_tables(6),
    policy="guardrails = []",
)

BENCH_TESTS = "from bench import simulate\n\n\ndef test_simulate():\n    assert simulate() > 0\n"


def bench_repo(root: Path) -> Path:
    root.mkdir(parents=True)
    for name, text in {
        "speedproof.toml": BENCH_MANIFEST,
        "bench.py": BENCH,
        "tests/test_bench.py": BENCH_TESTS,
    }.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "bench")
    return root


def constants(latency: str, success: str | None = None) -> dict[str, object]:
    blocks = [{"file": "bench.py", "search": "LATENCY = 40.0", "replace": f"LATENCY = {latency}"}]
    if success is not None:
        blocks.append(
            {"file": "bench.py", "search": "SUCCESS = 0.78", "replace": f"SUCCESS = {success}"}
        )
    return {"hypothesis": f"latency {latency}", "kind": "search_replace", "blocks": blocks}


@pytest.mark.slow
def test_the_reported_lane_accepts_and_a_protected_metric_regressing_twice_ends_it(
    tmp_path: Path,
) -> None:
    repo = bench_repo(tmp_path / "bench")
    pick = {"function": "bench.simulate", "rationale": "the benchmark's work"}
    after_accept = {
        "hypothesis": "latency 20",
        "kind": "search_replace",
        "blocks": [
            {"file": "bench.py", "search": "LATENCY = 30.0", "replace": "LATENCY = 20.0"},
            {"file": "bench.py", "search": "SUCCESS = 0.78", "replace": "SUCCESS = 0.5"},
        ],
    }
    again = {
        **after_accept,
        "hypothesis": "latency 25",
        "blocks": [
            {"file": "bench.py", "search": "LATENCY = 30.0", "replace": "LATENCY = 25.0"},
            {"file": "bench.py", "search": "SUCCESS = 0.78", "replace": "SUCCESS = 0.6"},
        ],
    }
    answers = replay_file(
        tmp_path / "answers.jsonl",
        [
            ("coordinator", pick),
            ("analyst", NO_CAUSES),
            ("optimizer", constants("30.0")),
            ("reviewer", PROCEED),
            ("coordinator", pick),
            ("analyst", NO_CAUSES),
            ("optimizer", after_accept),
            ("reviewer", PROCEED),
            ("coordinator", pick),
            ("optimizer", again),
            ("reviewer", PROCEED),
        ],
    )
    done = optimize("-m", str(repo), "--model", f"replay:{answers}", "--no-stability-check")
    assert done.returncode == 0, done.stdout + done.stderr
    folder = the_folder(repo)
    found = verdicts(folder)
    assert [v for _, v, _ in found] == ["accepted", "rejected", "rejected"], found
    assert found[0][2].startswith("latency_s improved by")
    assert all("success is significantly worse" in r and "guardrail" in r for *_, r in found[1:])
    lanes = rows(folder, "SELECT lane FROM verdicts ORDER BY candidate_id")
    assert lanes[0]["lane"] == "reported"
    assert exit_condition(folder) == "protected-metric-regressed"
    # The chain's head holds the accepted change only.
    head = git(repo, "show", f"refs/speedproof/{folder.name}/head:bench.py")
    assert "LATENCY = 30.0" in head and "SUCCESS = 0.78" in head


UNSTABLE_MAIN = textwrap.dedent(
    """
    import sys
    import time
    from pathlib import Path

    from wordfreq.core import main

    # Slower in every second checkout git makes (worktrees tree, tree1, tree2, ...): the same
    # code measured against itself is not the same program, as on a machine whose speed
    # depends on where a process runs.
    git = Path(__file__).resolve().parents[1] / ".git"
    if git.is_file():
        name = git.read_text().strip().rsplit("/", 1)[-1]
        if int(name[len("tree"):] or "0") % 2:
            time.sleep(0.05)
    sys.exit(main(sys.argv[1:]))
    """
).lstrip()


def test_a_benchmark_that_judges_the_base_against_itself_stops_before_any_proposal(
    tmp_path: Path,
) -> None:
    repo = wordfreq_repo(tmp_path / "wordfreq", main=UNSTABLE_MAIN)
    done = optimize("-m", str(repo), "--model", "heuristic")
    assert done.returncode == 0, done.stdout + done.stderr
    folder = the_folder(repo)
    assert exit_condition(folder) == "unstable-benchmark"
    notes = [e["body"] for e in events(folder, "note") if e["body"].get("what") == "a/a"]
    assert len(notes) == 1 and notes[0]["verdict"] == "rejected"
    assert (
        "second checkout of itself came out rejected"
        in events(folder, "exit")[0]["body"]["message"]
    )
    assert verdicts(folder) == []
    assert rows(folder, "SELECT id FROM role_calls") == []
    assert len(worktrees(repo)) == 1
    assert "unstable-benchmark" in done.stdout

"""Helpers for the campaign tests: a tiny Python target in a real git repository, and runners.

Imported by `test_campaign_*` (pytest puts `tests/` on sys.path); it holds no tests. The target,
`wordfreq`, counts words in a file while skipping stop words, and tests its stop list with
pytest. Its stop list is a module-level list scanned once a word (~300 string comparisons), so
a frozenset is a large, real speedup: a campaign has something true to find in one candidate.
Its workloads run ~100 ms, the schedule is 6 pairs a round up to 18 (a loaded machine can need a
third look even for a 2x win), and the instruction lane is off, so a candidate takes seconds.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support.git import commit_all, git
from support.model_server import ChatRequest
from support.toy_target import PYTEST_SUITE, toy_manifest, workload_table

SPEEDPROOF = [sys.executable, "-m", "speedproof"]
STOPWORDS = [f"stop{i}" for i in range(300)]

CORE = (
    '"""Word frequencies, skipping stop words."""\n\n'
    "STOPWORDS = [\n"
    + "".join(f'    "{w}",\n' for w in STOPWORDS)
    + "]\n\n\n"
    + textwrap.dedent(
        """
        def is_stop(word):
            return word in STOPWORDS


        def count(lines):
            counts = {}
            for line in lines:
                for word in line.split():
                    if not is_stop(word):
                        counts[word] = counts.get(word, 0) + 1
            return counts


        def main(argv):
            with open(argv[0], encoding="utf-8") as handle:
                counts = count(handle)
            top = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:5]
            for word, n in top:
                print(word, n)
            return 0
        """
    ).lstrip()
)

MAIN = "import sys\n\nfrom wordfreq.core import main\n\nsys.exit(main(sys.argv[1:]))\n"

TESTS = textwrap.dedent(
    """
    from wordfreq.core import count, is_stop


    def test_stop_words_are_skipped():
        assert count(["stop1 apple apple", "pear"]) == {"apple": 2, "pear": 1}


    def test_the_stop_list_is_known():
        assert is_stop("stop7") and not is_stop("apple")
    """
).lstrip()

MANIFEST = toy_manifest(
    workload_table(
        "visible",
        "data/visible.txt",
        tier="representative",
        files=["data/visible.txt"],
        timeout_s=30,
    ),
    workload_table(
        "secret-check",
        "data/secret-input.txt",
        tier="holdout",
        files=["data/secret-input.txt"],
        timeout_s=30,
    ),
    name="wordfreq",
    language="python",
    entry='module = "wordfreq"',
    tests=PYTEST_SUITE,
    instructions=False,
    extra='[protect]\npaths = ["/data"]',
    policy="round_pairs = 6\nmax_pairs = 18",
)

HOLDOUT_ID = "secret-check"
HOLDOUT_FILE = "secret-input.txt"


def words(count: int, seed: int) -> str:
    """`count` words, one stop word in three, ten words a line: deterministic for a seed."""
    found = []
    for i in range(count):
        if i % 3 == 0:
            found.append(STOPWORDS[(i * 7 + seed) % len(STOPWORDS)])
        else:
            found.append(f"w{(i * 13 + seed) % 700}")
    lines = [" ".join(found[i : i + 10]) for i in range(0, len(found), 10)]
    return "\n".join(lines) + "\n"


def wordfreq_repo(
    root: Path,
    *,
    core: str = CORE,
    main: str = MAIN,
    tests: str = TESTS,
    manifest: str = MANIFEST,
    extra: dict[str, str] | None = None,
) -> Path:
    """The target as a fresh repository with one commit; returns its folder."""
    files = {
        "speedproof.toml": manifest,
        "wordfreq/__init__.py": "",
        "wordfreq/__main__.py": main,
        "wordfreq/core.py": core,
        "tests/test_core.py": tests,
        "data/visible.txt": words(12_000, seed=1),
        f"data/{HOLDOUT_FILE}": words(12_000, seed=5),
        **(extra or {}),
    }
    root.mkdir(parents=True)
    return committed_repo(root, files, "wordfreq")


def committed_repo(root: Path, files: dict[str, str], message: str) -> Path:
    """`files` (path under `root` -> text) written and committed as a fresh repository's one
    commit, on branch main; returns `root`."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    commit_all(root, message)
    return root


def optimize(
    *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SPEEDPROOF, "optimize", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def the_folder(repo: Path) -> Path:
    """The one campaign folder under the target's default location."""
    found = sorted((repo / ".speedproof" / "campaigns").iterdir())
    assert len(found) == 1, found
    return found[0]


def rows(folder: Path, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    with sqlite3.connect(folder / "ledger.sqlite") as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute(sql, params)]


def events(folder: Path, kind: str) -> list[dict[str, Any]]:
    found = rows(folder, "SELECT * FROM events WHERE kind = ? ORDER BY id", (kind,))
    return [{**e, "body": json.loads(e["body"])} for e in found]


def exit_condition(folder: Path) -> str:
    return str(events(folder, "exit")[-1]["body"]["condition"])


def verdicts(folder: Path) -> list[tuple[int, str | None, str]]:
    """(candidate id, verdict, first reason) in order."""
    found = rows(
        folder,
        "SELECT c.id, v.verdict, v.reasons FROM candidates c"
        " LEFT JOIN verdicts v ON v.candidate_id = c.id ORDER BY c.id",
    )
    return [
        (r["id"], r["verdict"], (json.loads(r["reasons"]) or [""])[0] if r["reasons"] else "")
        for r in found
    ]


def worktrees(repo: Path) -> list[str]:
    out = git(repo, "worktree", "list", "--porcelain")
    return [line for line in out.splitlines() if line.startswith("worktree ")]


FROZENSET_ANSWER = {
    "hypothesis": "is_stop scans a 300-entry list per word; a frozenset lookup is constant time.",
    "rule": "frozenset",
    "kind": "function",
    "file": "wordfreq/core.py",
    "function": "wordfreq.core.is_stop",
    "source": "def is_stop(word):\n    return word in _STOP_SET\n",
    "preamble": "_STOP_SET = frozenset(STOPWORDS)\n",
}
PICK_IS_STOP = {"function": "wordfreq.core.is_stop", "rationale": "highest self time"}
NOTHING_LEFT = {"function": "", "rationale": "nothing left to try"}
NO_CAUSES: dict[str, Any] = {"causes": []}
PROCEED: dict[str, Any] = {"concerns": [], "recommendation": "proceed"}


def replay_file(path: Path, answers: list[tuple[str, Any]]) -> Path:
    """A recording answering in order: (role, JSON-able answer or raw text) per line."""
    from speedproof.agents.providers.replay import recorded_line

    lines = [
        recorded_line(role, answer if isinstance(answer, str) else json.dumps(answer))
        for role, answer in answers
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def campaign_id(folder: Path) -> str:
    (row,) = rows(folder, "SELECT id FROM campaigns")
    return str(row["id"])


MODEL = "test-model"


@dataclass
class Script:
    """Model-server answers per role, in order; a repair turn (no context block) gets `repair`.

    Every request's role and context are kept, so a test can read what each role was shown.
    """

    answers: dict[str, list[Any]]
    repair: str = "still no JSON, sorry"
    seen: list[tuple[str | None, dict[str, Any] | None]] = field(default_factory=list)

    def __call__(self, request: ChatRequest) -> str:
        self.seen.append((request.role, request.context))
        if request.role is None:
            return self.repair
        answer = self.answers[request.role].pop(0)
        return answer if isinstance(answer, str) else json.dumps(answer)

    def contexts(self, role: str) -> list[dict[str, Any]]:
        return [context for seen, context in self.seen if seen == role and context is not None]

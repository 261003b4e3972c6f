"""A toy Python target for the cluster campaign and verify tests (no tests here).

`toy` counts generated words that are neither stop words nor noise; each test scans a
module-level list of 600 strings, so the heuristic proposer finds two independent large wins
(a frozenset for each list, one per function) against the same parent: a cluster wave has two
candidates to judge at once. The membership helpers take two statements, so the
one-expression-helper rule leaves them alone. Workloads run a few tens of milliseconds, the
schedule is a fixed few pairs and the instruction lane is off, so a judgement takes seconds.

The program prints the node it runs on first (SPEEDPROOF_TEST_NODE, which the test cluster
gives each node, through the sandbox's `env_allow`): a sample's stdout digest says which node
measured it. `sets_patch` makes both lists frozensets, a win everywhere of about three quarters
of the run; `accel_patch` does the same only where TOY_ACCEL=1 and is a little slower elsewhere
(it asks on every lookup), standing in for a speedup that needs something only some machines
have (an optional native module, a CPU feature). Wins that large are seen even while the tests'
one CPU is shared by both nodes and other work.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from support.campaign import committed_repo
from support.git import git
from support.toy_target import PYTEST_SUITE, toy_manifest, workload_table

NODE_VARIABLE = "SPEEDPROOF_TEST_NODE"
ACCEL_VARIABLE = "TOY_ACCEL"
WORDS = 12000

STOPWORDS = [f"stop{i}" for i in range(600)]
NOISE = [f"noise{i}" for i in range(600)]


def _listing(name: str, words: list[str]) -> str:
    return f"{name} = [\n" + "".join(f'    "{w}",\n' for w in words) + "]\n"


CORE = (
    '"""Counting generated words that are neither stop words nor noise."""\n\n'
    "import os\n\n"
    + _listing("STOPWORDS", STOPWORDS)
    + "\n"
    + _listing("NOISE", NOISE)
    + "\n\n"
    + textwrap.dedent(
        f"""
        def is_stop(word):
            found = word in STOPWORDS
            return found


        def is_noise(word):
            found = word in NOISE
            return found


        def count(n):
            kept = 0
            for i in range(n):
                word = f"w{{i % 997}}"
                if not is_stop(word) and not is_noise(word):
                    kept += 1
            return kept


        def main(argv):
            print(os.environ.get("{NODE_VARIABLE}", "here"))
            print(count(int(argv[0])))
            return 0
        """
    ).lstrip()
)

MAIN = "import sys\n\nfrom toy.core import main\n\nsys.exit(main(sys.argv[1:]))\n"

TESTS = textwrap.dedent(
    """
    from toy.core import count, is_noise, is_stop


    def test_stop_words_and_noise_are_not_counted():
        assert is_stop("stop7") and is_noise("noise9") and not is_stop("w1")
        assert count(10) == 10
    """
).lstrip()

MANIFEST = toy_manifest(
    workload_table("count", str(WORDS), tier="representative", timeout_s=30),
    language="python",
    entry='module = "toy"',
    tests=PYTEST_SUITE,
    instructions=False,
    extra=(
        "[sandbox]\n"
        f'env_allow = ["LANG", "LC_ALL", "TZ", "TERM", "{NODE_VARIABLE}", "{ACCEL_VARIABLE}"]'
    ),
    policy="pairs = 8\ncarry_over_fraction = 0",
)


def toy_repo(root: Path) -> Path:
    """The toy target as a fresh repository with one commit; returns its folder."""
    files = {
        "speedproof.toml": MANIFEST,
        "toy/__init__.py": "",
        "toy/__main__.py": MAIN,
        "toy/core.py": CORE,
        "tests/test_core.py": TESTS,
    }
    root.mkdir(parents=True)
    return committed_repo(root, files, "toy")


def patch_of(repo: Path, old: str, new: str) -> str:
    """The diff that replaces `old` by `new` in toy/core.py (the tree is left as it was)."""
    core = repo / "toy" / "core.py"
    text = core.read_text(encoding="utf-8")
    assert old in text
    core.write_text(text.replace(old, new), encoding="utf-8")
    try:
        return git(repo, "diff") + "\n"
    finally:
        git(repo, "checkout", "--", ".")


SLOW_LISTS = (
    "def is_stop(word):\n    found = word in STOPWORDS\n    return found\n\n\n"
    "def is_noise(word):\n    found = word in NOISE\n"
)


def sets_patch(repo: Path) -> str:
    """A real win everywhere: both lists looked up as frozensets."""
    return patch_of(
        repo,
        SLOW_LISTS,
        "STOP_SET = frozenset(STOPWORDS)\nNOISE_SET = frozenset(NOISE)\n\n\n"
        "def is_stop(word):\n    found = word in STOP_SET\n    return found\n\n\n"
        "def is_noise(word):\n    found = word in NOISE_SET\n",
    )


def accel_patch(repo: Path) -> str:
    """A win only where TOY_ACCEL=1: each lookup asks whether the accelerator is there and uses
    the frozensets only then, so elsewhere it pays for asking and gains nothing."""
    return patch_of(
        repo,
        SLOW_LISTS,
        "STOP_SET = frozenset(STOPWORDS)\nNOISE_SET = frozenset(NOISE)\n\n\n"
        "def accelerated():\n"
        '    return os.environ.get("TOY_ACCEL") == "1"\n\n\n'
        "def is_stop(word):\n"
        "    found = word in (STOP_SET if accelerated() else STOPWORDS)\n"
        "    return found\n\n\n"
        "def is_noise(word):\n"
        "    found = word in (NOISE_SET if accelerated() else NOISE)\n",
    )


def output_digest(repo: Path, node: str) -> str:
    """The sha256 of what the toy prints on `node` (as a sample's stdout_sha256 records it)."""
    done = subprocess.run(
        [sys.executable, "-m", "toy", str(WORDS)],
        cwd=repo,
        env={NODE_VARIABLE: node, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        check=True,
    )
    return hashlib.sha256(done.stdout).hexdigest()


def node_name(_: object) -> str:
    """A job: the name of the node it runs on, as the test cluster gave it."""
    return os.environ.get(NODE_VARIABLE, "?")

"""A small real-shaped unittest project for the unittest runner's tests: it holds no tests itself.

`calc` is a package with a command-line entry point (`python -m calc N` prints how many primes lie
below N) and a `tests/` package of `unittest.TestCase`s, one of which fails before any patch
(`test_known_bug`: 0.1 + 0.2 is not 0.3 in floating point). `repository` makes it a real git
repository with a `speedproof.toml`; `judge` runs speedproof's real judge on a patch, under real
bubblewrap, with the instruction lane off and the baseline's test cache in the test's own folder.
"""

from __future__ import annotations

import difflib
import textwrap
from pathlib import Path

from speedproof.judge.evaluate import Judge, JudgeOptions
from speedproof.judge.outcome import GateRecord, Outcome
from speedproof.ledger import Ledger
from speedproof.manifest_loading import load_manifest
from support.toolchain import make_repo, sandbox


def text(source: str) -> str:
    return textwrap.dedent(source).lstrip()


# Trial division by every smaller number: about 0.15 s for N = 5000 on this 2-core machine, and
# the speedup below (divisors up to the square root) takes it to the interpreter's start-up.
SLOW_PRIMES = text(
    '''
    def add(a, b):
        return a + b


    def count_primes(limit):
        """How many primes lie below `limit`."""
        return sum(1 for n in range(2, limit) if all(n % d for d in range(2, n)))
    '''
)
FAST_PRIMES = SLOW_PRIMES.replace("range(2, n))", "range(2, int(n**0.5) + 1))")
# `add` subtracts: two tests break (small and negative numbers); the known bug stays failing.
BROKEN_ADD = SLOW_PRIMES.replace("return a + b", "return a - b")

FILES = {
    "calc/__init__.py": "",
    "calc/__main__.py": text(
        """
        import sys

        from calc.ops import count_primes

        print(count_primes(int(sys.argv[1])))
        """
    ),
    "calc/ops.py": SLOW_PRIMES,
    "tests/__init__.py": "",
    "tests/test_ops.py": text(
        """
        import unittest

        from calc.ops import add, count_primes


        class TestAdd(unittest.TestCase):
            def test_small_numbers(self):
                self.assertEqual(add(1, 2), 3)

            def test_negative_numbers(self):
                self.assertEqual(add(-1, -2), -3)

            def test_known_bug(self):
                self.assertEqual(add(0.1, 0.2), 0.3)


        class TestPrimes(unittest.TestCase):
            def test_primes_below_thirty(self):
                self.assertEqual(count_primes(30), 10)

            def test_no_primes_below_two(self):
                self.assertEqual(count_primes(2), 0)
        """
    ),
    # The CLI in a child process: it must find the target the way `python -m calc` does.
    "tests/test_cli.py": text(
        """
        import subprocess
        import sys
        import unittest


        class TestCommandLine(unittest.TestCase):
            def test_the_cli_prints_the_count(self):
                said = subprocess.run(
                    [sys.executable, "-m", "calc", "100"],
                    capture_output=True, text=True, check=True,
                )
                self.assertEqual(said.stdout.strip(), "25")
        """
    ),
}
MANIFEST = text(
    """
    [target]
    name = "calc"
    language = "python"
    module = "calc"

    [tests]
    runner = "unittest"
    args = ["discover", "-s", "tests", "-p", "test_*.py", "-t", "."]
    timeout_s = 60

    [[workloads]]
    id = "primes"
    args = ["5000"]
    timeout_s = 30

    [instructions]
    enabled = false
    """
)
# unittest's ids: module, class, method.
SMALL = "tests.test_ops.TestAdd.test_small_numbers"
NEGATIVE = "tests.test_ops.TestAdd.test_negative_numbers"
KNOWN_BUG = "tests.test_ops.TestAdd.test_known_bug"
IDS = (
    SMALL,
    NEGATIVE,
    KNOWN_BUG,
    "tests.test_ops.TestPrimes.test_primes_below_thirty",
    "tests.test_ops.TestPrimes.test_no_primes_below_two",
    "tests.test_cli.TestCommandLine.test_the_cli_prints_the_count",
)


def repository(where: Path, files: dict[str, str] | None = None) -> Path:
    """The project as a git repository of one commit, its manifest at the top."""
    repo, _ = make_repo(where, {**(files or FILES), "speedproof.toml": MANIFEST})
    return repo


def patch(path: str, old: str, new: str) -> str:
    """A unified diff turning `old` into `new` at `path` (both may be "" for none)."""
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        "/dev/null" if not old else f"a/{path}",
        f"b/{path}",
    )
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


def judge(repo: Path, patch_text: str, *, pairs: int | None = 4) -> Outcome:
    """speedproof's judge on one patch: guard, build, tests, behaviour, timed pairs, policy."""
    with Ledger.in_folder(repo.parent / "ledger") as ledger:
        judged = Judge(
            load_manifest(repo),
            sandbox=sandbox(),
            ledger=ledger,
            options=JudgeOptions(pairs=pairs, instructions=False, cache_dir=repo.parent / "c"),
        )
        return judged.judge(patch_text)


def gate_named(outcome: Outcome, name: str) -> GateRecord:
    """The record of one gate the judgement went through."""
    (gate,) = [g for g in outcome.gates if g.name == name]
    return gate

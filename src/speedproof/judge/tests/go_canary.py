"""A second channel for Go test results: a test that must fail, planted where no patch can see it.

A Go test binary links the package under test, so candidate code runs in the very process that
reports the results: an `init()` can print `--- PASS` lines for every test and `os.Exit(0)`
before a single test runs, and test2json turns that into a clean report. Nothing in the report
itself can tell.

So before the test binaries are compiled, every package with tests in the tree gets one more
test file, `zz_speedproof_canary_test.go`, holding a test whose name and failure message are
drawn fresh for this run (`secrets`, 64 bits each). The file is removed as soon as the binaries
are written, so nothing a test run can read names it. A report that believes is one where that
test ran and failed with its message, and the binary did not exit 0: a binary that exits 0,
reports the canary passed, or failed without its message, or leaves it out of a run that
otherwise passed, did not run its tests as Go's testing package would, and the run is
"tampered with". The canary's own outcome is then taken out of the results.

Its limit, stated in docs/adr/0043: the name and the message are constants compiled into the
binary, so code that reads its own executable and knows this scheme can still find them and
forge a consistent report. What it stops is the forging that works without that: fixed
passes, early exits, a reset exit status.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from speedproof.ground.toolchain import Outcome

CANARY_FILE = "zz_speedproof_canary_test.go"


@dataclass(frozen=True)
class Canary:
    """One run's canary: the test's name and the message it fails with."""

    test: str
    secret: str

    @classmethod
    def draw(cls) -> Canary:
        # "Test" then an upper-case letter: `go test` runs it as a test (TestXxx, Xxx not
        # starting with a lower-case letter).
        return cls(f"TestSpeedproofCanary{secrets.token_hex(8).upper()}", secrets.token_hex(8))

    def source(self, package_name: str) -> str:
        return (
            f"package {package_name}\n\n"
            'import "testing"\n\n'
            f"func {self.test}(t *testing.T) {{\n"
            f'\tt.Fatal("speedproof canary {self.secret}")\n'
            "}\n"
        )

    @contextmanager
    def planted(self, packages: Iterable[tuple[Path, str]]) -> Iterator[list[Path]]:
        """The canary written into each (folder, package name) while the block runs; the
        folders it was written to. Removed again however the block ends."""
        written: list[Path] = []
        try:
            for folder, name in packages:
                path = folder / CANARY_FILE
                path.write_text(self.source(name), encoding="utf-8")
                written.append(folder)
            yield written
        finally:
            for folder in written:
                (folder / CANARY_FILE).unlink(missing_ok=True)

    def check(
        self, package: str, outcome: Outcome | None, said: str, exit_code: int | None, cut: bool
    ) -> list[str]:
        """What disagreed in one package's run, in words. `outcome` and `said` are what the
        report says of the canary, `cut` whether another test of the package did not pass.

        An honest binary never exits 0 (its canary fails) and never reports the canary passed.
        It may leave the canary out only when the run was cut short, which shows as another
        test of the package that did not pass (a panic or `os.Exit` ends the binary there).
        """
        problems = []
        if exit_code == 0:
            problems.append(
                f"{package}: the test binary exited 0, but speedproof's canary test fails in "
                "every honest run"
            )
        if outcome is not None and (outcome != "failed" or self.secret not in said):
            problems.append(
                f"{package}: speedproof's canary test, which always fails, was reported "
                f"{outcome}{'' if self.secret in said else ' without its message'}"
            )
        if outcome is None and not cut:
            problems.append(
                f"{package}: speedproof's canary test is missing from a report in which every "
                "other test passed"
            )
        return problems

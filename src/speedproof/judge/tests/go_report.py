"""What a `go test -json` stream said, test by test: outcomes, failure output, and the synthetic
ids of failures that belong to a package rather than to one of its tests."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from speedproof.ground.toolchain import BAD, FAILURE_LIMIT, Outcome, clip

_RESULTS: dict[str, Outcome] = {"pass": "passed", "fail": "failed", "skip": "skipped"}
# Synthetic test ids for failures that belong to a package, not to one of its tests.
BUILD_FAILED = "[build failed]"
PACKAGE_FAILED = "[package failed]"


@dataclass
class GoReport:
    """What one `go test -json` stream said, test by test."""

    outcomes: dict[str, Outcome] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    text: list[str] = field(default_factory=list)
    events: int = 0
    _output: dict[str, list[str]] = field(default_factory=dict)
    _failed_packages: dict[str, str] = field(default_factory=dict)
    _packages_with_bad_tests: set[str] = field(default_factory=set)
    _started: dict[str, str] = field(default_factory=dict)
    # ImportPaths of `build-fail` events (`pkg`, `pkg [pkg.test]`), in the order they came.
    _builds: list[str] = field(default_factory=list)

    def feed(self, line: bytes) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            event = None
        if not isinstance(event, dict):
            # `go test` prints a few things outside the stream (a panic in the tool itself).
            self.text.append(line.decode(errors="replace") + "\n")
            return
        self.events += 1
        self._output_of(event)
        self._result_of(event)
        if event.get("Action") == "build-fail" and isinstance(event.get("ImportPath"), str):
            self._builds.append(str(event["ImportPath"]))

    def build_failed(self, package: str) -> None:
        """A package with tests whose test binary was not written (`go test -c` reports the
        build output but no failure for the package): charge it to the build that names it,
        else to the first that failed (a dependency), as `go test -json` does."""
        if package in self._failed_packages:
            return
        own = [b for b in self._builds if b == package or b.endswith(f" [{package}.test]")]
        self._failed_packages[package] = next(iter(own or self._builds), package)

    def _output_of(self, event: dict[str, object]) -> None:
        output = event.get("Output")
        if not isinstance(output, str):
            return
        self.text.append(output)
        package, test = event.get("Package"), event.get("Test")
        key = f"{package}/{test}" if test else str(package or event.get("ImportPath"))
        self._output.setdefault(key, []).append(output)

    def _result_of(self, event: dict[str, object]) -> None:
        action, package, test = event.get("Action"), event.get("Package"), event.get("Test")
        if not isinstance(action, str) or not isinstance(package, str):
            return
        if action not in _RESULTS and action != "run":
            return
        if action == "run" and isinstance(test, str):
            self._started.setdefault(f"{package}/{test}", package)
            return
        if isinstance(test, str) and test:
            outcome = _RESULTS[action]
            self.outcomes[f"{package}/{test}"] = outcome
            if outcome in BAD:
                self._packages_with_bad_tests.add(package)
        elif action == "fail":
            failed_build = event.get("FailedBuild")
            self._failed_packages[package] = failed_build if isinstance(failed_build, str) else ""

    def take_out(
        self, package: str, test: str, exit_code: int | None
    ) -> tuple[Outcome | None, str, bool]:
        """Remove a test speedproof added (`go_canary`) from the report, before `finish`:
        (its outcome, its output, whether another test of the package did not pass).

        The canary fails in every run, so its package's `fail` event is its own when nothing
        else failed and the binary exited 1 (`m.Run`'s "a test failed"); any other status (a
        TestMain's `os.Exit(3)`) still fails the package.
        """
        test_id = f"{package}/{test}"
        outcome = self.outcomes.pop(test_id, None)
        self._started.pop(test_id, None)
        said = "".join(self._output.pop(test_id, ()))
        others = [
            o
            for t, o in self.outcomes.items()
            if t.startswith(package + "/") and "/" not in t[len(package) + 1 :]
        ]
        cut = any(o in BAD for o in others) or any(
            p == package for t, p in self._started.items() if t not in self.outcomes
        )
        if not cut:
            self._packages_with_bad_tests.discard(package)
            if exit_code == 1 and self._failed_packages.get(package) == "":
                del self._failed_packages[package]
        return outcome, said, cut

    def finish(self) -> GoReport:
        """Turn package-level failures into synthetic ids and collect failing tests' output."""
        for test_id, package in self._started.items():
            if test_id not in self.outcomes:
                # Started and never finished: the binary died under it (a panic, Go's own
                # -timeout, os.Exit in the test). test2json reports no result for such a test.
                self.outcomes[test_id] = "failed"
                self._packages_with_bad_tests.add(package)
        for package, failed_build in self._failed_packages.items():
            said = "".join(self._output.get(failed_build or package, ()))
            if failed_build:
                self.outcomes[f"{package}/{BUILD_FAILED}"] = "error"
                self.failures[f"{package}/{BUILD_FAILED}"] = clip(said, FAILURE_LIMIT)
            elif package not in self._packages_with_bad_tests:
                # TestMain exiting non-zero, a panic outside any test: no test to name.
                self.outcomes[f"{package}/{PACKAGE_FAILED}"] = "failed"
                self.failures[f"{package}/{PACKAGE_FAILED}"] = clip(said, FAILURE_LIMIT)
        for test_id, outcome in self.outcomes.items():
            if outcome != "passed" and test_id not in self.failures:
                self.failures[test_id] = clip("".join(self._output.get(test_id, ())), FAILURE_LIMIT)
        return self


def parse_go_test_json(stream: bytes) -> GoReport:
    report = GoReport()
    feed_stream(report, stream)
    return report.finish()


def feed_stream(report: GoReport, stream: bytes) -> None:
    """Feed each non-blank line of a `go test -json` stream to `report`."""
    for line in stream.splitlines():
        if line.strip():
            report.feed(line)

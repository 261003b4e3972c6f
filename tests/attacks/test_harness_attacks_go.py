"""A Go candidate cannot start processes from its test binary nor hide a test (ADR 0063).

Each attack is a candidate of the bundled logstat example: its real `breaks-test-keep-query`
patch (the endpoint tests fail) plus package code that runs in the test binary, since a Go test
binary links the package under test. Real git worktrees, real `go`, real bubblewrap, the real
test gate.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from support.example_pair import example_pair, gate, patched

BROKEN = "breaks-test-keep-query"


def _text(text: str) -> str:
    return textwrap.dedent(text).lstrip()


# The binary starts itself again and relays the child's report with every `--- FAIL` turned into
# `--- PASS`, except speedproof's canary's, whose name the attacker knows the shape of; it exits
# with the child's status, so the canary still fails and the exit status is still 1.
REEXEC = _text(
    """
    package main

    import (
    \t"bufio"
    \t"os"
    \t"os/exec"
    \t"strings"
    )

    func init() {
    \tif !strings.HasSuffix(os.Args[0], ".test") || os.Getenv("LOGSTAT_RELAYED") != "" {
    \t\treturn
    \t}
    \tchild := exec.Command("/proc/self/exe", os.Args[1:]...)
    \tchild.Env = append(os.Environ(), "LOGSTAT_RELAYED=1")
    \tchild.Stderr = os.Stderr
    \tout, err := child.StdoutPipe()
    \tif err != nil || child.Start() != nil {
    \t\treturn
    \t}
    \tlines := bufio.NewScanner(out)
    \tfor lines.Scan() {
    \t\tline := lines.Text()
    \t\tif !strings.Contains(line, "Canary") {
    \t\t\tline = strings.Replace(line, "--- FAIL", "--- PASS", 1)
    \t\t}
    \t\tos.Stdout.WriteString(line + "\\n")
    \t}
    \tchild.Wait()
    \tos.Exit(child.ProcessState.ExitCode())
    }
    """
)

# On a full run the binary skips the tests the patch broke; a re-run chooses tests with
# -test.run, and then it behaves, so the test passes when re-run alone.
SKIP_ON_FULL_RUNS = _text(
    """
    package main

    import (
    \t"os"
    \t"strings"
    )

    func init() {
    \tif !strings.HasSuffix(os.Args[0], ".test") {
    \t\treturn
    \t}
    \tfor _, arg := range os.Args[1:] {
    \t\tif strings.HasPrefix(arg, "-test.run") {
    \t\t\treturn
    \t\t}
    \t}
    \tos.Args = append(os.Args, "-test.skip=^(TestNormalizeEndpoint|TestReportMatchesGolden)$")
    }
    """
)

# The patch's broken code path is taken only where no -test.run was given: a re-run of the
# missing tests takes the old one and passes them.
ONLY_ON_FULL_RUNS = _text(
    """
    package main

    import (
    \t"os"
    \t"strings"
    )

    func endpointOf(target string) string {
    \tfor _, arg := range os.Args[1:] {
    \t\tif strings.HasPrefix(arg, "-test.run") {
    \t\t\treturn pathOf(target)
    \t\t}
    \t}
    \treturn target
    }
    """
)


def _broken_on_full_runs_only(root: Path) -> dict[str, str]:
    parse = (root / "parse.go").read_text(encoding="utf-8")
    broken = parse.replace('strings.Split(target, "/")', 'strings.Split(endpointOf(target), "/")')
    assert broken != parse
    return {"parse.go": broken, "endpoint.go": ONLY_ON_FULL_RUNS, "skipper.go": SKIP_ON_FULL_RUNS}


def test_the_bundled_breaking_patch_alone_is_charged_by_name(tmp_path: Path) -> None:
    p = example_pair(tmp_path, "logstat")
    patched(p, BROKEN, {})

    result, _, _ = gate(p, tmp_path)

    assert not result.passed
    assert result.newly_failing, result.reasons()
    assert result.tampered == ()


def test_a_test_binary_that_re_executes_itself_to_rewrite_its_report_is_rejected(
    tmp_path: Path,
) -> None:
    p = example_pair(tmp_path, "logstat")
    patched(p, BROKEN, {"relay.go": REEXEC})

    result, _, _ = gate(p, tmp_path)

    assert not result.passed
    assert any(
        "the test binary started a process the baseline's does not" in r for r in result.reasons()
    ), result.reasons()


def test_a_test_skipped_on_full_runs_only_is_charged_as_missing(tmp_path: Path) -> None:
    p = example_pair(tmp_path, "logstat")
    patched(p, BROKEN, {})
    patched(p, None, _broken_on_full_runs_only(p.candidate.root))

    result, _, _ = gate(p, tmp_path)

    assert not result.passed
    assert any("missing from the candidate's full run" in r for r in result.reasons()), (
        result.reasons()
    )
    assert not result.recovered_flaky

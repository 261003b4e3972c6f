"""Which processes a Go test binary starts, traced from outside its sandbox (ADR 0063).

A tiny module whose test runs `/bin/true` through the package: the baseline starts that program,
so a candidate may too, but no other, and never a forked copy of itself. Real `go`, real strace,
real bubblewrap, the real test gate.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from speedproof.judge.tests.gate import gate_tests
from support.toolchain import manifest, pair, toolchain, write_files

MANIFEST = manifest('name = "spawn"\nlanguage = "go"', 'runner = "go"\nargs = ["./..."]')


def _text(text: str) -> str:
    return textwrap.dedent(text).lstrip()


FILES = {
    "go.mod": "module example.com/spawn\n\ngo 1.22\n",
    "spawn/spawn.go": _text(
        """
        package spawn

        import "os/exec"

        // Run runs a program and says whether it succeeded.
        func Run(name string) error { return exec.Command(name).Run() }
        """
    ),
    "spawn/spawn_test.go": _text(
        """
        package spawn

        import "testing"

        func TestRunsTrue(t *testing.T) {
        \tif err := Run("/bin/true"); err != nil {
        \t\tt.Fatal(err)
        \t}
        }

        func TestPlain(t *testing.T) {}
        """
    ),
}

# A raw clone without CLONE_VM or CLONE_VFORK: a second copy of the process, running beside it.
FORK = _text(
    """
    package spawn

    import (
    \t"os"
    \t"strings"
    \t"syscall"
    )

    func init() {
    \tif !strings.HasSuffix(os.Args[0], ".test") {
    \t\treturn
    \t}
    \tpid, _, _ := syscall.RawSyscall(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0)
    \tif pid == 0 {
    \t\tsyscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
    \t}
    }
    """
)


def _gate(tmp_path: Path, files: dict[str, str]) -> tuple[bool, tuple[str, ...], tuple[str, ...]]:
    p = pair(tmp_path, FILES)
    write_files(p.candidate.root, files)
    result, base, _ = gate_tests(
        toolchain(MANIFEST), p.baseline, p.candidate, revision=p.revision, cache_dir=tmp_path / "c"
    )
    return result.passed, result.reasons(), base.harness


def test_a_candidate_that_starts_the_programs_the_baseline_starts_passes(tmp_path: Path) -> None:
    same = 'package spawn\n\nimport "os/exec"\n\nfunc Run(n string) error {\n'
    same += "\tcmd := exec.Command(n)\n\treturn cmd.Run()\n}\n"

    passed, reasons, harness = _gate(tmp_path, {"spawn/spawn.go": same})

    assert passed, reasons
    assert harness == ("process example.com/spawn/spawn: /bin/true",)


def test_a_candidate_that_starts_another_program_is_rejected_naming_it(tmp_path: Path) -> None:
    other = 'package spawn\n\nimport "os/exec"\n\n'
    other += 'func Run(n string) error { return exec.Command("/bin/sh", "-c", n).Run() }\n'

    passed, reasons, _ = _gate(tmp_path, {"spawn/spawn.go": other})

    assert not passed
    assert reasons == (
        "the test binary started a process the baseline's does not: example.com/spawn/spawn: "
        "/bin/sh",
    )


def test_a_forked_copy_of_the_test_binary_is_rejected(tmp_path: Path) -> None:
    passed, reasons, _ = _gate(tmp_path, {"spawn/fork.go": FORK})

    assert not passed
    assert any("1 forked copies of the test binary" in r for r in reasons), reasons

"""Discovery on Go targets: a pprof profiling build under real bubblewrap, on logstat and more.

logstat is laid out as its own git repository with its holdout log deleted, so a discovery that
ran the holdout workload would fail; every command the sandbox starts is recorded.
"""

from __future__ import annotations

import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from speedproof.discovery import DiscoveryError, Profile
from speedproof.discovery.go_source import (
    GENERATED_FILE,
    PROFILED_EXIT,
    PROFILED_MAIN,
    wrap_main,
)
from speedproof.discovery.pprof_raw import Frame, parse_raw
from speedproof.examples import get_example, materialise
from speedproof.manifest_loading import LoadedManifest, load_manifest, parse_manifest
from speedproof.source.function import split_lines
from speedproof.source.go import parse
from support.discovery import profiled, run_discovery
from support.git import git
from support.toolchain import make_repo


@dataclass(frozen=True)
class Discovered:
    repo: Path
    profile: Profile
    commands: list[tuple[str, ...]]
    seconds: float


def profiling_runs(commands: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Runs of the profiling binary (the build folder's discovery/go/bin)."""
    return [c for c in commands if "/discovery/go/bin/" in c[0]]


@pytest.fixture(scope="module")
def logstat(tmp_path_factory: pytest.TempPathFactory) -> Discovered:
    folder = tmp_path_factory.mktemp("logstat")
    repo = materialise(get_example("logstat"), folder)
    (repo / "data" / "holdout" / "docs-2024-03-13.log").unlink()
    git(repo, "commit", "-q", "-am", "no holdout input")
    start = time.perf_counter()
    profile, commands = run_discovery(load_manifest(repo), repo, folder / "out")
    return Discovered(repo, profile, commands, time.perf_counter() - start)


def test_logstat_hot_functions_are_its_own_declarations_with_their_exact_lines(
    logstat: Discovered,
) -> None:
    functions = logstat.profile.functions
    assert len(functions) >= 5
    for hot in functions:
        path = logstat.repo / hot.file
        assert path.is_file() and hot.file.endswith(".go"), hot
        source = path.read_bytes()
        lines = split_lines(source.decode())
        assert hot.source == "".join(lines[hot.start_line - 1 : hot.end_line]), hot.name
        declaration = next(
            n for n in parse(source).children if n.start_point.row + 1 == hot.start_line
        )
        assert declaration.type in ("function_declaration", "method_declaration")
        assert declaration.end_point.row + 1 == hot.end_line
        assert hot.source.startswith("func ")
    names = [f.name for f in functions]
    # The regular expressions logstat compiles and runs per line are its hottest work.
    assert {"main.parseLine", "main.normalizeEndpoint"} <= set(names[:5])
    assert "main.(*stats).addLine" in names


def test_no_runtime_or_standard_library_function_is_listed(logstat: Discovered) -> None:
    assert logstat.profile.profiler == "pprof" and logstat.profile.unit == "samples"
    for hot in logstat.profile.functions:
        assert hot.name.startswith("main."), hot.name
        assert PROFILED_MAIN not in hot.name and hot.file != GENERATED_FILE
    # Library time is its caller's: parseLine's own body is a handful of lines around a regexp.
    parse_line = next(f for f in logstat.profile.functions if f.name == "main.parseLine")
    assert parse_line.self_pct > 5.0
    assert sum(f.self_pct for f in logstat.profile.functions) <= 100.0


def test_short_workloads_are_repeated_until_enough_samples_and_recorded(
    logstat: Discovered,
) -> None:
    profile = logstat.profile
    runs = profiling_runs(logstat.commands)
    assert sum(profile.amplified.values()) == len(runs)
    for workload, count in profile.amplified.items():
        # A logstat workload runs ~40 ms, ~4 samples: one run is never enough.
        assert count > 1, workload
        note = next(n for n in profile.notes if n.startswith(f"workload {workload!r}"))
        assert count == 50 or "only" not in note, note
    assert profile.total >= 200


def test_only_representative_workloads_run_and_never_the_holdout(logstat: Discovered) -> None:
    manifest = load_manifest(logstat.repo).manifest
    wanted = {tuple(w.args): w.id for w in manifest.workloads if w.tier == "representative"}
    ran = [wanted.get(c[1:]) for c in profiling_runs(logstat.commands)]
    assert None not in ran and set(ran) == set(wanted.values())
    everything = " ".join(" ".join(c) for c in logstat.commands)
    assert "docs-2024-03-13" not in everything and "shop-2024-03-10" not in everything
    assert logstat.profile.workloads == ("shop-day", "api-day-slow")


def test_the_profiling_build_leaves_the_baseline_worktree_untouched(logstat: Discovered) -> None:
    assert git(logstat.repo, "status", "--porcelain", "--ignored") == ""
    assert not (logstat.repo / GENERATED_FILE).exists()
    assert PROFILED_MAIN not in (logstat.repo / "main.go").read_text()


def test_wrapping_main_keeps_every_line_and_routes_os_exit_through_the_profile() -> None:
    source = textwrap.dedent(
        """
        package main

        import (
        \tsys "os"
        \t"fmt"
        )

        // main is the entry point; domain is not renamed.
        func main() {
        \tmain := 1
        \tfmt.Println(main)
        \tsys.Exit(run())
        }

        func run() int { defer fmt.Println("bye"); return 0 }

        func stop() { exit := sys.Exit; exit(2) }
        """
    ).encode()
    wrapped = wrap_main(source)
    text = wrapped.source.decode()
    assert wrapped.has_main and wrapped.exits == 2
    assert len(text.splitlines()) == len(source.decode().splitlines())
    assert f"func {PROFILED_MAIN}() {{" in text
    assert f"\t{PROFILED_EXIT}(run())" in text and f"exit := {PROFILED_EXIT};" in text
    assert "\tmain := 1\n\tfmt.Println(main)" in text and "sys.Exit" not in text
    assert "// main is the entry point" in text


def test_pprof_raw_text_is_read_with_inlined_frames_and_names_holding_spaces() -> None:
    text = textwrap.dedent(
        """
        PeriodType: cpu nanoseconds
        Period: 10000000
        Samples:
        samples/count cpu/nanoseconds
                  3   30000000: 1 2
                  1   10000000: 2
        Locations
             1: 0x44367a M=1 atomic.(*Pointer[go.shape.struct { a; b [2]int }]).Store internal/runtime/atomic/types.go:539:0 s=538
                     main.(*stats).addLine example.com/logstat/stats.go:91:0 s=79
             2: 0x4f95d6 M=1 main.run example.com/logstat/main.go:53:0 s=31
        Mappings
        1: 0x400000/0x4fd000/0x0   [FN]
        """  # noqa: E501
    )
    raw = parse_raw(text)
    assert raw.total == 4
    assert raw.frames((1, 2)) == [
        Frame("atomic.(*Pointer[go.shape.struct { a; b [2]int }]).Store",
              "internal/runtime/atomic/types.go", 539),
        Frame("main.(*stats).addLine", "example.com/logstat/stats.go", 91),
        Frame("main.run", "example.com/logstat/main.go", 53),
    ]  # fmt: skip


TINY_MODULE = "example.com/tiny"


def tiny_target(tmp_path: Path, files: dict[str, str], args: str) -> LoadedManifest:
    files = {"go.mod": f"module {TINY_MODULE}\n\ngo 1.22\n", **files}
    repo, _ = make_repo(
        tmp_path / "repo", {k: textwrap.dedent(v).lstrip() for k, v in files.items()}
    )
    text = (
        '[target]\nname = "tiny"\nlanguage = "go"\n\n[tests]\nrunner = "go"\n\n'
        f'[[workloads]]\nid = "spin"\nargs = [{args}]\n'
    )
    return LoadedManifest(manifest=parse_manifest(text), path=repo / "speedproof.toml", text=text)


SPIN = {
    "main.go": """
        package main

        import (
        \t"fmt"
        \t"os"
        \t"strconv"

        \t"example.com/tiny/work"
        )

        func main() {
        \tos.Exit(run())
        }

        func run() int {
        \tn, _ := strconv.Atoi(os.Args[1])
        \tacc := &work.Acc{}
        \tfor i := 0; i < 40; i++ {
        \t\tfunc() { acc.Add(work.Spin(n)) }()
        \t}
        \tfmt.Println(acc.Total)
        \treturn 0
        }
        """,
    "work/work.go": """
        package work

        // Acc adds up results.
        type Acc struct{ Total int }

        func (a *Acc) Add(v int) { a.Total += v % 7 }

        //go:noinline
        func Spin(n int) int {
        \tx := 0
        \tfor i := 0; i < n; i++ {
        \t\tx = x*31 + i ^ (x >> 3)
        \t}
        \treturn x
        }
        """,
}


def test_a_function_of_another_package_is_named_by_its_import_path(tmp_path: Path) -> None:
    loaded = tiny_target(tmp_path, SPIN, '"2000000"')
    profile, _ = run_discovery(loaded, loaded.root, tmp_path / "out", min_samples=20)
    top = profile.functions[0]
    assert top.name == f"{TINY_MODULE}/work.Spin" and top.file == "work/work.go"
    assert top.source.startswith("func Spin(n int) int {") and top.self_pct > 50.0
    # The closure inside run() is run's: pprof's `main.run.func1` never reaches the list.
    names = {f.name for f in profile.functions}
    assert "main.run" in names and not any(".func" in n for n in names)
    assert next(f for f in profile.functions if f.name == "main.run").cum_pct > 50.0


def test_a_program_exiting_from_another_package_is_a_named_error(tmp_path: Path) -> None:
    files = {
        "main.go": """
            package main

            import "example.com/tiny/quit"

            func main() { quit.Now() }
            """,
        "quit/quit.go": """
            package quit

            import "os"

            func Now() { os.Exit(0) }
            """,
    }
    loaded = tiny_target(tmp_path, files, "")
    with pytest.raises(DiscoveryError, match="left no CPU profile"):
        run_discovery(loaded, loaded.root, tmp_path / "out")


def test_every_profiled_run_is_recorded_as_the_profiling_binary(logstat: Discovered) -> None:
    # No cProfile runner in a Go discovery, and every run is the profiling build's binary.
    assert profiled(logstat.commands) == []
    assert all(Path(c[0]).name == "logstat" for c in profiling_runs(logstat.commands))

"""Discovery on Python targets: cProfile under real bubblewrap, on textstat and small targets.

The bundled textstat is laid out as its own git repository with its holdout input deleted, so a
discovery that ran the holdout workload would fail; every command the sandbox starts is recorded.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from speedproof.discovery import Budget, DiscoveryError, Profile
from speedproof.examples import get_example, materialise
from speedproof.manifest_loading import LoadedManifest, load_manifest, parse_manifest
from speedproof.source.function import split_lines
from support.discovery import profiled, run_discovery
from support.git import git
from support.toolchain import make_repo


@dataclass(frozen=True)
class Discovered:
    repo: Path
    profile: Profile
    commands: list[tuple[str, ...]]


@pytest.fixture(scope="module")
def textstat(tmp_path_factory: pytest.TempPathFactory) -> Discovered:
    folder = tmp_path_factory.mktemp("textstat")
    repo = materialise(get_example("textstat"), folder)
    (repo / "data" / "holdout" / "tickets.csv").unlink()
    git(repo, "commit", "-q", "-am", "no holdout input")
    profile, commands = run_discovery(load_manifest(repo), repo, folder / "out")
    return Discovered(repo, profile, commands)


def definition_at(path: Path, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if first == line:
                return node
    raise AssertionError(f"no definition starts at {path}:{line}")


def test_textstat_hot_functions_are_its_own_definitions_with_their_exact_lines(
    textstat: Discovered,
) -> None:
    functions = textstat.profile.functions
    assert len(functions) >= 5
    for hot in functions:
        path = textstat.repo / hot.file
        assert hot.file.startswith("textstat/") and path.is_file(), hot
        lines = split_lines(path.read_text(encoding="utf-8"))
        assert hot.source == "".join(lines[hot.start_line - 1 : hot.end_line]), hot.name
        node = definition_at(path, hot.start_line)
        assert node.end_lineno == hot.end_line
        assert hot.name.rsplit(".", 1)[-1] == node.name
        module = hot.file.removesuffix(".py").replace("/", ".")
        assert hot.name.startswith(module + ".")
    names = [f.name for f in functions]
    # A method is named by its class, and the profile is ranked by self share.
    assert "textstat.analysis.TextStats.add" in names
    assert [f.self_pct for f in functions] == sorted((f.self_pct for f in functions), reverse=True)


def test_no_standard_library_or_builtin_function_is_listed(textstat: Discovered) -> None:
    for hot in textstat.profile.functions:
        assert hot.name.startswith("textstat."), hot.name
        assert "<" not in hot.name, hot.name  # no <genexpr>, <listcomp>, <module>
    assert textstat.profile.profiler == "cProfile"
    assert textstat.profile.unit == "calls"
    assert sum(f.self_pct for f in textstat.profile.functions) <= 100.0


def test_only_representative_workloads_run_and_never_the_holdout(textstat: Discovered) -> None:
    manifest = load_manifest(textstat.repo).manifest
    wanted = {tuple(w.args): w.id for w in manifest.workloads if w.tier == "representative"}
    runs = profiled(textstat.commands)
    ran = [wanted.get(tuple(c[6:])) for c in runs]  # python -c RUNNER OUT -m MODULE ARGS
    assert None not in ran, "a profiled run was not a representative workload"
    assert set(ran) == set(wanted.values())
    every_word = " ".join(" ".join(c) for c in textstat.commands)
    for workload in manifest.workloads:
        if workload.tier != "representative":
            assert " ".join(workload.args) not in every_word, workload.id
    assert "tickets.csv" not in every_word
    assert textstat.profile.workloads == ("novel", "reviews-by-rating")
    assert sum(textstat.profile.amplified.values()) == len(runs)


def test_a_failing_representative_workload_stops_discovery_by_name(tmp_path: Path) -> None:
    """The exit status survives the profiler (plain `python -m cProfile` always exits 0)."""
    repo = materialise(get_example("textstat"), tmp_path)
    text = textwrap.dedent(
        """
        [target]
        name = "textstat"
        language = "python"
        module = "textstat"

        [tests]
        runner = "pytest"

        [[workloads]]
        id = "gone"
        args = ["data/no-such-file.txt"]
        """
    )
    loaded = LoadedManifest(manifest=parse_manifest(text), path=repo / "speedproof.toml", text=text)
    with pytest.raises(DiscoveryError, match=r"workload 'gone' exited 1 .*expects 0"):
        run_discovery(loaded, repo, tmp_path / "out")


SMALL = {
    "demo/__init__.py": "",
    "demo/core.py": textwrap.dedent(
        '''
        """A small target: a decorated method with a generator, and a function that sorts."""

        import functools


        def cached(fn):
            @functools.wraps(fn)
            def inner(*args):
                return fn(*args)

            return inner


        class Table:
            @cached
            def total(self, n):
                return sum(i * i for i in range(n))


        def sort_many(n, times):
            data = [(i * 7919) % n for i in range(n)]
            for _ in range(times):
                sorted(data)
            return data


        def main(argv):
            size = int(argv[0])
            print(Table().total(size * 4), len(sort_many(size, 20)))
        '''
    ).lstrip(),
    "demo/__main__.py": "import sys\n\nfrom demo.core import main\n\nmain(sys.argv[1:])\n",
    "run.py": "import sys\n\nfrom demo.core import main\n\nmain(sys.argv[1:])\n",
}


def small_target(tmp_path: Path, start: str, size: str, tiny: bool = False) -> LoadedManifest:
    repo, _ = make_repo(tmp_path / "repo", SMALL)
    workloads = f'[[workloads]]\nid = "main"\nargs = ["{size}"]\n'
    if tiny:
        workloads += '\n[[workloads]]\nid = "tiny"\nargs = ["3"]\n'
    text = (
        f'[target]\nname = "demo"\nlanguage = "python"\n{start}\n\n'
        f'[tests]\nrunner = "pytest"\n\n{workloads}'
    )
    return LoadedManifest(manifest=parse_manifest(text), path=repo / "speedproof.toml", text=text)


def test_library_and_generator_time_is_credited_to_the_function_that_spends_it(
    tmp_path: Path,
) -> None:
    loaded = small_target(tmp_path, 'module = "demo"', "60000")
    profile, _ = run_discovery(loaded, loaded.root, tmp_path / "out", min_samples=1)
    by_name = {f.name: f for f in profile.functions}
    assert set(by_name) <= {
        "demo.core.Table.total",
        "demo.core.sort_many",
        "demo.core.main",
        "demo.core.cached",
    }
    # `sorted` is a built-in: its time is sort_many's, the caller that decides to sort 20 times.
    assert by_name["demo.core.sort_many"].self_pct > 20.0
    # The generator expression inside total() is total's, not a function of its own.
    total = by_name["demo.core.Table.total"]
    assert total.self_pct > 5.0
    # A decorated method starts at its decorator: its source is the whole definition.
    assert total.source.lstrip().startswith("@cached\n")
    assert total.source.splitlines()[-1].strip() == "return sum(i * i for i in range(n))"
    assert by_name["demo.core.main"].cum_pct > 80.0


def test_a_script_target_is_profiled_the_same_way(tmp_path: Path) -> None:
    loaded = small_target(tmp_path, 'script = "run.py"', "20000")
    profile, commands = run_discovery(loaded, loaded.root, tmp_path / "out", min_samples=1)
    assert "demo.core.sort_many" in {f.name for f in profile.functions}
    assert all(c[4].endswith("/run.py") for c in profiled(commands))


def test_a_tiny_workload_is_repeated_and_the_repetitions_are_recorded(tmp_path: Path) -> None:
    loaded = small_target(tmp_path, 'module = "demo"', "60000", tiny=True)
    budget = Budget(max_runs=12, max_seconds=30.0)
    profile, commands = run_discovery(
        loaded, loaded.root, tmp_path / "out", min_samples=50, budget=budget
    )
    runs = profiled(commands)
    tiny_runs = [c for c in runs if c[-1] == "3"]
    assert 1 < profile.amplified["tiny"] <= 12
    assert len(tiny_runs) == profile.amplified["tiny"]
    # The large workload holds 0.05 s of profiled time in one run.
    assert profile.amplified["main"] == 1
    assert any(n.startswith("workload 'tiny': ") for n in profile.notes)


def test_a_view_carries_the_source_only_when_asked(textstat: Discovered) -> None:
    hot = textstat.profile.functions[0]
    bare = hot.view(with_source=False)
    assert set(bare) == {"name", "file", "start_line", "end_line", "self_pct", "cum_pct"}
    full = hot.view(with_source=True)
    assert full["source"] == hot.source and full["name"] == hot.name
    assert textstat.profile.views(with_source=False)[0] == bare

"""The package stands in layers: no module imports itself back through a circle, the policy
imports nothing of speedproof but its own modules, the judge's path reaches no function-mode
module, and the ground reaches no stage of the judge but through the two crossings the layers
contract names.

The import graph is grimp's (import-linter's library), read from the installed source; imports
under `if TYPE_CHECKING:` count too, since a circle there is one refactor away from a real one.
The same forbidden rules and the layers stand in pyproject.toml's [tool.importlinter] for
`lint-imports`.
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path

import grimp
import pytest

from support.paths import ROOT

POLICY = frozenset(
    {
        "speedproof.judge.policy.decide",
        "speedproof.judge.policy.evidence",
        "speedproof.judge.policy.carry_over",
        "speedproof.judge.policy.readings",
    }
)
JUDGE_PATH = ("judge", "ground")
FUNCTION_MODE = ("functions", "corpus", "reward")
# The judge's path, one package a stage, and the modules that run a candidate through them.
STAGES = ("guard", "worktree", "build", "tests", "inputs", "behaviour", "measure")
ORCHESTRATION = ("command", "patches", "evaluate", "isolation", "view", "outcome", "early_end")
# The two imports through which the ground reaches a stage, as the layers contract ignores them:
# the manifest's schema names the variants' input kinds, and a Python benchmark starts with the
# test runner's bootstrap.
CROSSINGS: tuple[tuple[str, str], ...] = (
    ("speedproof.manifest", "speedproof.judge.inputs.variant_settings"),
    ("speedproof.bench.command", "speedproof.judge.tests.python_tests"),
)


def _graph(package: str) -> grimp.ImportGraph:
    # No cache: a cache folder would be written into the working folder, and the graph of this
    # package (336 modules) takes about a second to build.
    return grimp.build_graph(package, exclude_type_checking_imports=False, cache_dir=None)


def _strongly_connected(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every group of modules that import one another round, by Tarjan's algorithm (iterative:
    a chain of imports may be deeper than Python's recursion limit)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in order:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        order[root] = low[root] = len(order)
        stack.append(root)
        while work:
            module, targets = work[-1]
            target = next(targets, None)
            if target is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[module])
                if low[module] == order[module]:
                    groups.append(_pop_group(stack, module))
            elif target not in order:
                order[target] = low[target] = len(order)
                stack.append(target)
                work.append((target, iter(sorted(graph.find_modules_directly_imported_by(target)))))
            elif target in stack:
                low[module] = min(low[module], order[target])
    return [group for group in groups if len(group) > 1]


def _pop_group(stack: list[str], until: str) -> list[str]:
    group: list[str] = []
    while True:
        module = stack.pop()
        group.append(module)
        if module == until:
            return sorted(group)


def _circles(graph: grimp.ImportGraph) -> list[str]:
    """One circle of each group, spelled `a -> b -> ... -> a`."""
    spelled = []
    for group in _strongly_connected(graph):
        first = group[0]
        step = next(m for m in sorted(graph.find_modules_directly_imported_by(first)) if m in group)
        back = graph.find_shortest_chain(importer=step, imported=first) or ()
        spelled.append(" -> ".join((first, *back)))
    return spelled


def _write_package(root: Path, name: str, modules: dict[str, str]) -> None:
    folder = root / name
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    for module, text in modules.items():
        (folder / f"{module}.py").write_text(text)


def _upward_chains(
    graph: grimp.ImportGraph,
    lower: str,
    higher: tuple[str, ...],
    crossings: tuple[tuple[str, str], ...],
) -> list[str]:
    """Every shortest chain by which the package `lower` reaches one of `higher`, through any
    module, once the named `crossings` are taken out of a copy of the graph."""
    graph = copy.deepcopy(graph)
    for importer, imported in crossings:
        graph.remove_import(importer=importer, imported=imported)
    return sorted(
        " -> ".join(chain)
        for target in higher
        for chain in graph.find_shortest_chains(importer=lower, imported=target, as_packages=True)
    )


@pytest.fixture(scope="module")
def speedproof_graph() -> grimp.ImportGraph:
    return _graph("speedproof")


def test_a_circle_of_three_modules_is_named_module_by_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_package(
        tmp_path,
        "circled_sample",
        {
            "a": "from circled_sample import b\n",
            # Under TYPE_CHECKING: it counts all the same.
            "b": "import typing\nif typing.TYPE_CHECKING:\n    import circled_sample.c\n",
            "c": "import circled_sample.a\n",
            "d": "import circled_sample.a\n",
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))

    assert _circles(_graph("circled_sample")) == [
        "circled_sample.a -> circled_sample.b -> circled_sample.c -> circled_sample.a"
    ]


def test_no_module_of_speedproof_imports_itself_back_through_a_circle(
    speedproof_graph: grimp.ImportGraph,
) -> None:
    circles = _circles(speedproof_graph)

    assert not circles, "import circles:\n" + "\n".join(circles)


def test_the_policy_imports_nothing_of_speedproof_but_its_own_modules(
    speedproof_graph: grimp.ImportGraph,
) -> None:
    strays = {
        f"{module} -> {imported}"
        for module in POLICY
        for imported in speedproof_graph.find_modules_directly_imported_by(module)
        if imported not in POLICY
    }

    assert not strays, f"the policy imports more than its own modules: {sorted(strays)}"


def test_the_judges_path_reaches_no_function_mode_module(
    speedproof_graph: grimp.ImportGraph,
) -> None:
    chains = [
        " -> ".join(chain)
        for source in JUDGE_PATH
        for target in FUNCTION_MODE
        for chain in speedproof_graph.find_shortest_chains(
            importer=f"speedproof.{source}", imported=f"speedproof.{target}", as_packages=True
        )
    ]

    assert not chains, "the judge's path imports function mode:\n" + "\n".join(sorted(chains))


def test_a_ground_that_reaches_a_stage_through_another_module_is_named_by_its_chain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_package(tmp_path, "layered_sample", {"stage": "", "schema": "", "ground": ""})
    (tmp_path / "layered_sample" / "schema.py").write_text("import layered_sample.stage\n")
    (tmp_path / "layered_sample" / "ground.py").write_text("import layered_sample.schema\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = _graph("layered_sample")

    assert _upward_chains(graph, "layered_sample.ground", ("layered_sample.stage",), ()) == [
        "layered_sample.ground -> layered_sample.schema -> layered_sample.stage"
    ]
    crossing = (("layered_sample.schema", "layered_sample.stage"),)
    assert _upward_chains(graph, "layered_sample.ground", ("layered_sample.stage",), crossing) == []


def test_the_ground_reaches_no_stage_of_the_judge_but_through_the_two_named_crossings(
    speedproof_graph: grimp.ImportGraph,
) -> None:
    higher = tuple(f"speedproof.judge.{name}" for name in (*STAGES, *ORCHESTRATION))

    chains = _upward_chains(speedproof_graph, "speedproof.ground", higher, CROSSINGS)

    assert not chains, "the ground imports the judge:\n" + "\n".join(chains)


def test_no_stage_of_the_judge_imports_its_orchestration(
    speedproof_graph: grimp.ImportGraph,
) -> None:
    # early_end is the exception the stages raise (`Ended`), so it stands among them.
    above = tuple(f"speedproof.judge.{name}" for name in ORCHESTRATION if name != "early_end")
    chains = [
        chain
        for stage in STAGES
        for chain in _upward_chains(speedproof_graph, f"speedproof.judge.{stage}", above, ())
    ]

    assert not chains, "a stage imports the orchestration:\n" + "\n".join(chains)


def test_every_crossing_this_test_allows_is_one_the_layers_contract_ignores() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(c for c in contracts["contracts"] if c["id"] == "layers")

    assert sorted(layers["ignore_imports"]) == sorted(f"{a} -> {b}" for a, b in CROSSINGS)

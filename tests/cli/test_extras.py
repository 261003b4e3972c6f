"""A lighter install: what `pip install speedproof` runs without its extras, and what a missing
extra says.

The CLI runs in a fresh interpreter whose import system refuses the libraries of the `llm`,
`report` and `fn` extras (a `sys.meta_path` finder raising ModuleNotFoundError for them, as an
interpreter without them installed does), on a real tiny Python target in its own git
repository. pyproject.toml is read with tomllib and held to `speedproof.extras.EXTRA_OF` and to
what the source imports.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest

from speedproof import extras
from speedproof.cli import EXIT_FOR_VERDICT
from speedproof.cli_errors import EXIT_ERROR
from speedproof.extras import EXTRA_OF, MissingExtra, require
from support.paths import ROOT
from support.toy_target import toy_manifest, toy_target, workload_table

SOURCE = ROOT / "src" / "speedproof"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# Extras that are not runtime features, or that `all` leaves to the installer (torch's build).
NOT_IN_ALL = {"dev", "train", "all"}
# Files run by the target's own interpreter (the pytest plugin), never by speedproof's.
RUN_BY_THE_TARGET = SOURCE / "judge" / "tests" / "pytest_record"
# The modules that wrap an extra's library; each is imported only once `require` has passed.
WRAPPERS = {
    "speedproof.agents.providers.anthropic_messages": "anthropic",
    "speedproof.agents.providers.endpoint": "httpx2",
    "speedproof.agents.providers.openai_compat": "openai",
    "speedproof.agents.providers.sdk_failures": "httpx2",
    "speedproof.report.plots": "plotly",
}
BLOCKED = ",".join(sorted(EXTRA_OF))

# What a Python without the extras does on `import openai`: ModuleNotFoundError, by name.
_BLOCKER = """\
import sys
from importlib.abc import MetaPathFinder

BLOCKED = frozenset(sys.argv[1].split(","))


class Uninstalled(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Uninstalled())
"""
_CLI = (
    _BLOCKER + 'sys.argv = ["speedproof", *sys.argv[2:]]\nfrom speedproof.cli import main\nmain()\n'
)
_IMPORT_EVERYTHING = (
    _BLOCKER
    + """\
import importlib, json, pkgutil
import speedproof

failed = {}
for found in pkgutil.walk_packages(speedproof.__path__, "speedproof."):
    if found.name.endswith("__main__"):
        continue  # runs the CLI
    try:
        importlib.import_module(found.name)
    except ModuleNotFoundError as exc:
        failed[found.name] = exc.name
print(json.dumps(failed))
"""
)

TOOL = """\
import sys


def widest(text):
    best = 0
    for line in text.splitlines():
        best = max(best, len(line.strip()))
    return best


with open(sys.argv[1], encoding="utf-8") as handle:
    print(widest(handle.read()))
"""
MANIFEST = toy_manifest(
    workload_table("lines", "data/lines.txt", files=["data/lines.txt"]),
    name="widest",
    language="python",
    instructions=False,
    policy="pairs = 4",
)
COMMENT = """\
diff --git a/tool.py b/tool.py
--- a/tool.py
+++ b/tool.py
@@ -1,4 +1,4 @@
-import sys
+import sys  # reads one file
{BLANK}
{BLANK}
 def widest(text):
""".replace("{BLANK}", " ")


def _without_extras(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`speedproof ARGV` in an interpreter where the extras' libraries do not import."""
    return subprocess.run(
        [sys.executable, "-c", _CLI, BLOCKED, *argv],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        check=False,
    )


@pytest.fixture(scope="module")
def widest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python tool whose one function is hot enough for discovery to name it."""
    lines = (" " * (i % 6) + "x" * (1 + i * 37 % 80) for i in range(200_000))
    files = {"tool.py": TOOL, "data/lines.txt": "".join(f"{line}\n" for line in lines)}
    return toy_target(tmp_path_factory.mktemp("extras") / "widest", MANIFEST, files)


@dataclass(frozen=True)
class Judged:
    ledger: Path
    done: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def judged(widest: Path, tmp_path_factory: pytest.TempPathFactory) -> Judged:
    """`judge --json` of a comment-only patch, and the ledger it wrote."""
    folder = tmp_path_factory.mktemp("judged")
    patch = folder / "comment.patch"
    patch.write_text(COMMENT)
    ledger = folder / "ledger"
    done = _without_extras(
        "judge", str(patch), "-m", str(widest), "--ledger", str(ledger), "--json"
    )
    return Judged(ledger, done)


def _one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


# The extras module itself.


def test_a_missing_module_is_a_one_line_error_naming_the_feature_and_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(EXTRA_OF, "speedproof_absent_sdk", "llm")
    with pytest.raises(MissingExtra) as raised:
        require("speedproof_absent_sdk", "speedproof optimize --model openai:gpt-4o")
    message = str(raised.value)
    assert message == (
        "speedproof optimize --model openai:gpt-4o needs the llm extra: "
        "pip install 'speedproof[llm]'"
    )
    assert raised.value.extra == "llm" and isinstance(raised.value.__cause__, ModuleNotFoundError)


def test_a_library_whose_own_dependency_is_missing_names_that_dependency(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "halfinstalled").mkdir()
    (tmp_path / "halfinstalled" / "__init__.py").write_text("import speedproof_absent_dep\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(EXTRA_OF, "halfinstalled", "report")
    with pytest.raises(MissingExtra, match=r"\(speedproof_absent_dep is missing\)$") as raised:
        require("halfinstalled", "drawing the plots")
    assert "\n" not in str(raised.value)
    assert str(raised.value).startswith("drawing the plots needs the report extra: pip install")


def test_an_installed_module_is_returned_as_imported() -> None:
    assert require("plotly", "drawing the HTML report's plots").__name__ == "plotly"
    assert extras.install_hint("fn") == "pip install 'speedproof[fn]'"


# pyproject.toml against the code.


def _name(requirement: str) -> str:
    found = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert found is not None, requirement
    return re.sub(r"[-_.]+", "-", found.group(0)).lower()


def _distribution(module: str) -> str:
    """The distribution that installs `module`: the one of the same (normalised) name, as for
    every library here (tree_sitter_go is tree-sitter-go), else whichever installed one ships
    it (yaml is PyYAML); that last lookup reads every installed package, so it comes last."""
    try:
        return _name(metadata.distribution(_name(module)).metadata["Name"])
    except metadata.PackageNotFoundError:
        shipping = metadata.packages_distributions().get(module)
        return _name(shipping[0] if shipping else module)


def _extra(name: str) -> set[str]:
    return {_name(r) for r in PYPROJECT["project"]["optional-dependencies"][name]}


def test_each_guarded_module_is_installed_by_the_extra_its_message_names() -> None:
    core = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    for module, extra in EXTRA_OF.items():
        assert _distribution(module) in _extra(extra), (module, extra)
        assert _distribution(module) not in core, module


def test_the_core_holds_what_judging_needs_and_no_extra_library() -> None:
    core = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    assert {"typer", "rich", "pydantic", "scipy", "numpy", "libcst", "jinja2"} <= core
    assert {"tree-sitter", "tree-sitter-go"} <= core
    assert not core & {"openai", "anthropic", "httpx2", "plotly", "pyseccomp", "ray", "torch"}


def test_all_brings_every_runtime_extra_but_train() -> None:
    extras_table = PYPROJECT["project"]["optional-dependencies"]
    (self_reference,) = extras_table["all"]
    named = re.fullmatch(r"speedproof\[([a-z,]+)\]", self_reference)
    assert named is not None, self_reference
    assert set(named.group(1).split(",")) == set(extras_table) - NOT_IN_ALL
    assert {"llm", "report", "fn", "ray"} <= set(extras_table)


def _third_party_imports() -> dict[str, set[Path]]:
    found: dict[str, set[Path]] = {}
    for path in SOURCE.rglob("*.py"):
        if RUN_BY_THE_TARGET in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.partition(".")[0]
                if top not in sys.stdlib_module_names and top != "speedproof":
                    found.setdefault(top, set()).add(path.relative_to(SOURCE))
    return found


def test_every_library_the_source_imports_comes_with_the_core_or_a_runtime_extra() -> None:
    declared = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    for extra in set(PYPROJECT["project"]["optional-dependencies"]) - {"dev"}:
        declared |= _extra(extra)
    undeclared = {
        module: sorted(map(str, paths))
        for module, paths in _third_party_imports().items()
        if _distribution(module) not in declared
    }
    assert undeclared == {}


def test_without_the_extras_only_the_modules_wrapping_their_libraries_fail_to_import() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_EVERYTHING, BLOCKED],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == WRAPPERS


# The CLI in an interpreter without the extras.


@pytest.mark.parametrize(
    "argv",
    [("--help",), ("optimize", "--help"), ("advisor", "--help"), ("fn", "--help")],
    ids=lambda argv: " ".join(argv),
)
def test_help_works_without_the_extras(argv: tuple[str, ...]) -> None:
    done = _without_extras(*argv)
    assert done.returncode == 0, done.stderr
    assert "Usage: speedproof" in done.stdout


def test_judge_gives_its_verdict_without_the_extras(judged: Judged) -> None:
    answer = json.loads(judged.done.stdout)
    assert answer["verdict"] in EXIT_FOR_VERDICT, judged.done.stderr
    assert judged.done.returncode == EXIT_FOR_VERDICT[answer["verdict"]]
    assert [g["name"] for g in answer["gates"]][:2] == ["guard", "apply"]


def test_the_report_is_written_without_plots_and_says_which_extra_draws_them(
    judged: Judged,
) -> None:
    ledger = judged.ledger
    done = _without_extras("report", str(ledger))
    assert done.returncode == 0, done.stderr
    note = _one_line(done.stderr)
    assert note.endswith(
        "drawing the HTML report's plots needs the report extra: pip install 'speedproof[report]'"
    )
    html = (ledger / "report.html").read_text()
    assert "Plotly.newPlot(" not in html
    assert "No plots on this page" in html and "speedproof[report]" in html
    assert "Plot left out" in html
    assert json.loads((ledger / "report.json").read_text())["campaigns"]
    assert (ledger / "report.md").read_text()


def test_fn_evals_chart_without_plotly_names_the_report_extra(tmp_path: Path) -> None:
    code = (
        _BLOCKER
        + """\
from pathlib import Path
from speedproof.corpus.evaluate import write_chart
from speedproof.extras import MissingExtra
try:
    write_chart({"families": {}, "split": "test", "protocol": "one-shot"}, Path(sys.argv[2]))
except MissingExtra as exc:
    print(exc)
"""
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "plotly", str(tmp_path / "chart.html")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(
        "drawing the evaluation's per-family chart needs the report extra: "
        "pip install 'speedproof[report]'"
    )
    assert not (tmp_path / "chart.html").exists()


def test_optimize_with_the_heuristic_proposer_runs_a_campaign_without_the_extras(
    widest: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "campaign"
    done = _without_extras(
        "optimize",
        "--manifest",
        str(widest),
        "--model",
        "heuristic",
        "--max-candidates",
        "1",
        "--no-stability-check",
        "--out",
        str(folder),
    )
    assert done.returncode == 0, done.stderr
    assert "hot functions at" in done.stdout and "tool.widest" in done.stdout
    assert "exit: " in done.stdout
    # `make demo` reads the campaign back the same way.
    reported = _without_extras("report", str(folder))
    assert reported.returncode == 0, reported.stderr


@pytest.mark.parametrize("spec", ["openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5"])
def test_a_hosted_model_without_the_llm_extra_is_a_one_line_error(
    widest: Path, tmp_path: Path, spec: str
) -> None:
    done = _without_extras(
        "optimize", "--manifest", str(widest), "--model", spec, "--out", str(tmp_path / "c")
    )
    assert done.returncode == EXIT_ERROR
    assert _one_line(done.stderr) == (
        f"error: the model provider {spec} needs the llm extra: pip install 'speedproof[llm]'"
    )
    assert not (tmp_path / "c").exists()


def test_function_mode_without_the_fn_extra_fails_closed_naming_it() -> None:
    cases = SOURCE / "functions" / "examples"
    done = _without_extras(
        "fn",
        "verify",
        str(cases / "distinct_count.case.json"),
        str(cases / "distinct_count_fast.py"),
        "--json",
    )
    assert done.returncode == EXIT_ERROR, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "infrastructure_error"
    assert (
        "function mode's seccomp sandbox needs the fn extra: pip install 'speedproof[fn]'"
        in (result["detail"])
    )

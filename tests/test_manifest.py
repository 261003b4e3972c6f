from __future__ import annotations

from pathlib import Path

import pytest

from speedproof.errors import ManifestError
from speedproof.manifest import load_manifest, parse_manifest

GOOD = """\
[target]
name = "demo"
language = "go"
package = "./cmd/demo"

[tests]
runner = "go"

[[workloads]]
id = "small"
args = ["data/small.txt"]
files = ["data/small.txt"]

[[workloads]]
id = "hidden"
tier = "holdout"
stdin = "data/hidden.txt"

[policy]
pairs = 30
"""


def test_a_valid_manifest_loads_with_defaults_filled_in() -> None:
    manifest = parse_manifest(GOOD)
    assert manifest.target.package == "./cmd/demo"
    assert manifest.policy.pairs == 30
    assert manifest.policy.accept_floor_pct == 3.0
    assert manifest.policy.guardrail_limit_pct == 2.0
    assert manifest.policy.statistical_support_required is True
    assert manifest.sandbox.network is False
    assert [w.tier for w in manifest.workloads] == ["representative", "holdout"]


def test_input_files_include_stdin_files() -> None:
    assert parse_manifest(GOOD).input_files() == ["data/hidden.txt", "data/small.txt"]


def _error(text: str) -> str:
    with pytest.raises(ManifestError) as caught:
        parse_manifest(text, "m.toml")
    return str(caught.value)


def test_an_unknown_key_is_named_with_its_line() -> None:
    message = _error(GOOD.replace('id = "hidden"', 'id = "hidden"\ncolour = "red"'))
    assert "`workloads.1.colour` (line 16): unknown key" in message


def test_a_wrong_type_is_named_with_its_line() -> None:
    message = _error(GOOD.replace("pairs = 30", 'pairs = "many"'))
    assert "`policy.pairs` (line 20)" in message
    assert "integer" in message


def test_a_bad_tier_names_the_workload_entry_and_line() -> None:
    message = _error(GOOD.replace('tier = "holdout"', 'tier = "secret"'))
    assert "`workloads.1.tier` (line 16)" in message


def test_a_toml_syntax_error_names_the_line() -> None:
    message = _error(GOOD.replace('name = "demo"', "name = demo"))
    assert "line 2" in message


def test_a_manifest_without_a_representative_workload_is_refused() -> None:
    text = GOOD.replace('id = "small"', 'id = "small"\ntier = "stress"')
    assert "representative" in _error(text)


def test_repeated_workload_ids_are_refused() -> None:
    assert "repeated: small" in _error(GOOD.replace('id = "hidden"', 'id = "small"'))


def test_a_python_target_needs_a_module_or_a_script() -> None:
    text = GOOD.replace('language = "go"', 'language = "python"')
    assert "exactly one of `module` or `script`" in _error(text)


def test_a_bad_normalisation_pattern_is_refused() -> None:
    text = GOOD + '\n[behaviour]\nnormalise = [{pattern = "("}]\n'
    assert "not a regular expression" in _error(text)


def test_loading_a_missing_manifest_is_a_named_error(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="cannot read"):
        load_manifest(tmp_path / "speedproof.toml")


def test_loading_a_folder_finds_its_manifest(tmp_path: Path) -> None:
    (tmp_path / "speedproof.toml").write_text(GOOD)
    loaded = load_manifest(tmp_path)
    assert loaded.root == tmp_path.resolve()
    assert loaded.manifest.target.name == "demo"

from __future__ import annotations

from pathlib import Path

import pytest

from speedproof.ground.errors import ManifestError
from speedproof.judge.measure.schedule import schedule_for
from speedproof.manifest_loading import load_manifest, parse_manifest

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


def test_the_default_schedule_is_sequential_in_rounds_of_ten_within_a_time_budget() -> None:
    policy = parse_manifest(GOOD.replace("pairs = 30", "")).policy
    assert (policy.round_pairs, policy.max_pairs, policy.pairs, policy.alpha) == (
        10,
        200,
        None,
        0.05,
    )
    assert policy.max_measure_s == 20.0
    schedule = schedule_for(parse_manifest(GOOD.replace("pairs = 30", "")))
    assert (schedule.max_pairs, schedule.budget_s) == (200, 20.0)
    off = parse_manifest(GOOD.replace("pairs = 30", "max_measure_s = 0"))
    assert schedule_for(off).budget_s is None


def test_a_negative_time_budget_is_refused_with_its_line() -> None:
    message = _error(GOOD.replace("pairs = 30", "max_measure_s = -1"))
    assert "max_measure_s" in message and "m.toml:" in message


def test_a_maximum_below_the_round_is_refused_with_its_line() -> None:
    text = GOOD.replace("pairs = 30", "round_pairs = 20\nmax_pairs = 10")
    message = _error(text)
    assert "max_pairs (10) must be at least round_pairs (20)" in message
    assert "m.toml:" in message


def test_an_unknown_metric_in_the_policy_is_refused() -> None:
    message = _error(GOOD.replace("pairs = 30", 'guardrails = ["cpu", "latency"]'))
    assert "unknown metric(s) in [policy]: latency" in message


REPORTED = GOOD.replace(
    "[policy]\npairs = 30\n",
    """[behaviour]
compare_stdout = false

[reported]
primary = "latency_s"
direction = "lower"
min_delta_pct = 4.0
repeats = 8

[[reported.protected]]
name = "success"
direction = "higher"
tolerance_pct = 1.5
""",
)


def test_a_reported_block_makes_its_metrics_the_rules() -> None:
    manifest = parse_manifest(REPORTED)
    rules = manifest.rules()
    assert manifest.lane == "reported"
    assert rules.primary_metric == "latency_s"
    assert rules.accept_floor_pct == 4.0
    assert "success" in rules.guardrails
    assert rules.limit_for("success") == 1.5
    assert rules.limit_for("cpu") == rules.guardrail_limit_pct


def test_a_reported_target_must_not_compare_its_stdout() -> None:
    message = _error(REPORTED.replace("compare_stdout = false", "compare_stdout = true"))
    assert "set behaviour.compare_stdout = false" in message


def test_a_bad_reported_direction_names_the_key_and_line() -> None:
    message = _error(REPORTED.replace('direction = "higher"', 'direction = "up"'))
    line = REPORTED.splitlines().index('direction = "higher"') + 1
    assert f"`reported.protected.0.direction` (line {line})" in message


def test_instructions_as_the_primary_metric_needs_the_lane_enabled() -> None:
    text = GOOD.replace("pairs = 30", 'primary_metric = "instructions"')
    assert parse_manifest(text).lane == "instructions"
    message = _error(text + "\n[instructions]\nenabled = false\n")
    assert "needs [instructions] enabled = true" in message


def test_timed_runs_are_pinned_only_when_the_manifest_says_so() -> None:
    assert parse_manifest(GOOD).policy.timed_cpus == "all"
    assert parse_manifest(GOOD.replace("pairs = 30", "timed_cpus = 2")).policy.timed_cpus == 2
    assert parse_manifest(GOOD.replace("pairs = 30", "timed_cpus = 1")).policy.timed_cpus == 1


@pytest.mark.parametrize("value", ["0", '"some"', "-1"])
def test_a_timed_cpus_that_is_neither_a_count_nor_all_is_named_with_its_line(value: str) -> None:
    message = _error(GOOD.replace("pairs = 30", f"timed_cpus = {value}"))
    assert "`policy.timed_cpus` (line 20)" in message

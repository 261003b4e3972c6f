"""The adequacy bar at corpus build and in `fn corpus audit`: constant references, unreachable
targets and inputs that never take the interesting branch are refused and redrawn."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from speedproof.corpus.adequacy_audit import by_family, check_case
from speedproof.corpus.families import BY_NAME, FAMILIES, Family
from speedproof.corpus.families.base import Knobs, Size, dense_band, make_prelude
from speedproof.corpus.generate import AdequacyGate, GenerationConfig, _render, build_pairs
from speedproof.corpus.jsonl import sha256_file, write_rows
from speedproof.corpus.splits import MANIFEST, split_path
from speedproof.functions.case import Case, generate_inputs, make_case
from support.corpus import SMALL, fn_app, unverified_folder
from support.paths import ROOT

COMPLEMENT = BY_NAME["complement_lookup"]


def _unreachable_case() -> Case:
    """Complement lookup on keys `x // 21` (at most 142) with target 480: no pair reaches it,
    so the reference answers 0 on every input, as three v1 dev cases did."""
    prelude = make_prelude("bucket", random.Random(0), "train")
    knobs = Knobs(prelude=prelude, params=(("target", 10_000),))
    template = COMPLEMENT.templates_for("dev")[0]
    return make_case(
        id="complement_lookup.unreachable",
        family=COMPLEMENT.name,
        template=f"complement_lookup.{template.id}",
        reference_source=template.slow(knobs),
        edge_inputs=COMPLEMENT.edges(knobs),
        benchmark_specs=[COMPLEMENT.inputs(knobs, Size(40))],
        input_spec=COMPLEMENT.inputs(knobs, Size.random(40)),
    )


def test_a_reference_that_answers_the_same_on_every_input_is_below_the_bar() -> None:
    result = check_case(_unreachable_case())
    assert not result.passed
    text = " | ".join(result.shortfalls)
    assert "only 1 distinct reference outputs" in text
    assert "return-0" in text and "the interesting branch is taken on 0%" in text


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_a_freshly_drawn_case_of_every_family_meets_the_bar(family: Family) -> None:
    chosen = family
    template = chosen.templates[0]
    for attempt in range(4):  # the generator redraws too; an unlucky literal may miss
        rng = random.Random(f"bar:{chosen.name}:{attempt}")
        result = check_case(_render(chosen, template, template.role, rng, 0).case)
        if result.passed:
            break
    assert result.passed, result.shortfalls
    first = result.draws[0]
    assert first.kill_rate >= 0.95 and not first.traps_passed and first.hit_share is not None


def test_random_inputs_reach_beyond_the_benchmark_size_and_take_the_dense_band() -> None:
    family = BY_NAME["hash_membership"]
    knobs = family.knobs(random.Random(3), "train", 0)
    spec = family.inputs(knobs, Size.random(200))
    lengths = [len(args[0]) for args in generate_inputs(spec, 1, 400)]  # type: ignore[arg-type]
    assert max(lengths) > 200 and min(lengths) == 0
    assert sum(30 <= n < 199 for n in lengths) > 100  # v1 never drew sizes between 30 and n - 1
    lo, hi = dense_band(knobs.prelude)
    assert hi - lo < 600


def test_the_gate_redraws_a_draft_below_the_bar_and_keeps_each_case_figures() -> None:
    config = GenerationConfig(
        seed=3, sizes={"train": 2, "dev": 0, "frozen_seen": 0, "frozen_heldout": 0}
    )
    refused: list[str] = []

    class Gate(AdequacyGate):
        def __call__(self, pair: object) -> bool:
            if not refused:  # refuse the first draft, as the bar would an inadequate one
                refused.append("first")
                return False
            return super().__call__(pair)  # type: ignore[arg-type]

    gate = Gate()
    pairs = build_pairs(config, gate)
    assert len(pairs) == 2 and pairs != build_pairs(config)
    assert set(gate.figures) == {p.case.id for p in pairs}
    assert all(f["kill_rate"] >= 0.95 for f in gate.figures.values())


@pytest.mark.slow
def test_the_audit_command_fails_a_corpus_holding_an_inadequate_case(tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    unverified_folder(
        folder,
        GenerationConfig(
            seed=11, sizes={"train": 8, "dev": 2, "frozen_seen": 1, "frozen_heldout": 3}
        ),
    )
    dev = split_path(folder, "dev")
    write_rows(dev, [_unreachable_case().model_dump(mode="json")])
    manifest = folder / MANIFEST
    data = json.loads(manifest.read_text())
    data["splits"]["dev"]["sha256"] = sha256_file(dev)
    manifest.write_text(json.dumps(data))
    result = CliRunner().invoke(fn_app(), ["corpus", "audit", str(folder)])
    assert result.exit_code == 1, result.output
    assert (
        "complement_lookup.unreachable: seed 11: only 1 distinct reference outputs" in result.output
    )
    assert "below the adequacy bar" in result.output
    assert "kill rate" in result.output  # the per-family table


@pytest.mark.slow
def test_per_family_sums_take_the_kill_rate_over_all_live_mutants() -> None:
    cases = [_unreachable_case()]
    families = by_family([check_case(c) for c in cases])
    entry = families["complement_lookup"]
    assert entry.cases == 1 and entry.failing == 1
    assert 0.0 <= entry.kill_rate <= 1.0 and entry.traps_passed >= 2


def test_the_small_test_config_still_builds_without_the_gate() -> None:
    assert len(build_pairs(SMALL)) == sum(SMALL.sizes.values())


def test_corpus_v1_stays_readable_and_says_it_is_superseded() -> None:
    v1 = ROOT / "corpus" / "v1"
    result = CliRunner().invoke(fn_app(), ["corpus", "audit", str(v1), "--no-adequacy"])
    assert result.exit_code == 0, result.output
    assert "superseded by corpus/v2" in result.output and "no leaks" in result.output

"""Variant workloads: inputs nobody has seen, and edge option values, made from a seed."""

from __future__ import annotations

from pathlib import Path

from speedproof.judge.behaviour.variants import make_variants, varied_workloads
from speedproof.judge.inputs.variants import option_values
from speedproof.manifest_loading import load_manifest
from support.paths import ROOT

LOGSTAT = ROOT / "examples" / "logstat"


def test_numeric_option_values_are_found_in_both_spellings() -> None:
    args = ["-top", "15", "--bucket=50", "-slow", "0.2", "file-1.log", "-", "7"]
    assert option_values(args) == [(1, "-top", "15"), (2, "--bucket", "50"), (4, "-slow", "0.2")]


def test_every_workload_with_inputs_gets_its_variants_and_each_option_its_edges(
    tmp_path: Path,
) -> None:
    workloads = load_manifest(LOGSTAT).manifest.workloads
    made = [recipe.make() for recipe in make_variants(workloads, LOGSTAT, tmp_path, 42, 6)]
    content = [v for v in made if not v.argv]
    assert [w.id for w in varied_workloads(workloads)] == [w.id for w in workloads]
    assert len(content) == 6 * len(workloads)
    assert content[0].workload.id == "shop-day#1" and content[0].origin == "shop-day"
    # Every argument that named an input names the variant's copy, in the variant's folder.
    for variant in (v for v in content if v.workload.stdin is None):
        named = [a for a in variant.workload.args if a.endswith((".log", ".log.1"))]
        assert named and all(Path(a).parent == variant.folder for a in named)
        assert variant.workload.files == named
    edges = sorted(v.workload.id.split("#", 1)[1] for v in made if v.argv)
    # -slow is a fraction in one workload (0.2) and a whole number in another (2): both edges.
    assert edges == sorted(
        [f"top={e}" for e in ("0", "1", "-1", "4294967296")]
        + [f"slow={e}" for e in ("0", "1", "-1", "1e300", "4294967296")]
    )
    stdin = next(v for v in content if v.origin == "rotated-stdin")
    assert stdin.workload.stdin is not None and Path(stdin.workload.stdin).parent == stdin.folder


def test_the_same_seed_makes_the_same_variants_and_another_seed_others(tmp_path: Path) -> None:
    workloads = load_manifest(LOGSTAT).manifest.workloads[:1]

    def contents(seed: int, into: str) -> list[bytes]:
        made = make_variants(workloads, LOGSTAT, (tmp_path / into), seed=seed, count=3)
        return [Path(r.make().workload.files[0]).read_bytes() for r in made]

    for into in ("a", "b", "c"):
        (tmp_path / into).mkdir()
    assert contents(1, "a") == contents(1, "b")
    assert contents(1, "a") != contents(2, "c")


def test_a_workload_whose_inputs_are_of_kind_none_has_no_content_variants(tmp_path: Path) -> None:
    workload = load_manifest(LOGSTAT).manifest.workloads[0].model_copy(update={"mutator": "none"})
    made = make_variants([workload], LOGSTAT, tmp_path, seed=3, count=5)
    assert all(r.argv for r in made) and made

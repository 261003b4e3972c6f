"""The leakage audit finds each kind of planted leak, and nothing in a clean corpus.

These split folders are staged without running the verifier (the audit reads only ids,
templates, sources and checksums); the verifier's part is tested in test_corpus_verified.py.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from speedproof.corpus.audit import Leak, audit_cases, audit_folder
from speedproof.corpus.families import BY_NAME
from speedproof.corpus.families.base import Size
from speedproof.corpus.generate import GenerationConfig, StagedRow, build_pairs
from speedproof.corpus.literals import SplitName
from speedproof.corpus.splits import split_path, write_splits, write_staging
from speedproof.functions.case import Case, make_case

CONFIG = GenerationConfig(
    seed=11, sizes={"train": 16, "dev": 8, "frozen_seen": 8, "frozen_heldout": 3}
)


def _splits() -> dict[str, list[Case]]:
    splits: dict[str, list[Case]] = {}
    for pair in build_pairs(CONFIG):
        splits.setdefault(pair.split, []).append(pair.case)
    return splits


def _variant(case: Case, *, id: str, template: str, source: str | None = None) -> Case:
    return make_case(
        id=id,
        family=case.family,
        template=template,
        reference_source=source or case.reference_source,
        edge_inputs=case.edge_inputs,
        benchmark_inputs=case.benchmark_inputs,
        benchmark_specs=case.benchmark_specs,
        input_spec=case.input_spec,
    )


def _kinds(leaks: list[Leak]) -> set[str]:
    return {leak.kind for leak in leaks}


def test_a_clean_generated_corpus_has_no_leaks() -> None:
    assert audit_cases(_splits()) == []


def test_a_dev_case_id_reused_in_train_is_a_case_id_leak() -> None:
    splits = _splits()
    dev = splits["dev"][0]
    planted = _variant(splits["train"][0], id=dev.id, template=splits["train"][0].template)
    splits["train"][0] = planted
    leaks = audit_cases(splits)
    assert _kinds(leaks) == {"case_id"}
    assert set(leaks[0].groups) == {"dev", "train"}


def test_a_frozen_template_id_in_train_is_a_template_leak() -> None:
    splits = _splits()
    frozen = splits["frozen_seen"][0]
    splits["train"][0] = _variant(splits["train"][0], id="new.id", template=frozen.template)
    assert _kinds(audit_cases(splits)) == {"template"}


def test_a_renamed_copy_of_a_dev_case_in_train_is_an_ast_hash_leak() -> None:
    splits = _splits()
    dev = splits["dev"][0]
    renamed = dev.reference_source.replace("xs", "values").replace("out", "result")
    assert renamed != dev.reference_source
    splits["train"].append(_variant(dev, id="copy.id", template="copy.template", source=renamed))
    # Same program, so same loops too: both checks fire.
    assert _kinds(audit_cases(splits)) == {"ast_hash", "skeleton"}


def test_new_literals_on_a_frozen_loop_structure_in_train_are_a_skeleton_leak() -> None:
    splits = _splits()
    frozen = splits["frozen_seen"][0]
    lines = frozen.reference_source.splitlines()
    lines[1] = lines[1].split("=")[0] + "= 3"  # the prelude's constant, now a train-like value
    source = "\n".join(lines).replace("xs", "items") + "\n"
    splits["train"].append(_variant(frozen, id="same.loops", template="other.t", source=source))
    leaks = audit_cases(splits)
    assert _kinds(leaks) == {"skeleton"}
    assert leaks[0].groups == ("train", "frozen_seen")


def test_a_held_out_family_case_in_train_is_a_family_leak() -> None:
    splits = _splits()
    family = BY_NAME["indexed_lookup"]
    template = family.templates[0]
    knobs = family.knobs(random.Random(5), "train", 0)
    planted = make_case(
        id="indexed_lookup.planted",
        family=family.name,
        template="indexed_lookup.planted",
        reference_source=template.slow(knobs),
        edge_inputs=family.edges(knobs),
        benchmark_inputs=family.edges(knobs),
        input_spec=family.inputs(knobs, Size(20, exact=False)),
    )
    splits["train"].append(planted)
    # Its template's loops are those of the frozen held-out split as well.
    assert _kinds(audit_cases(splits)) == {"family", "skeleton"}


def test_a_case_listed_twice_in_one_split_is_a_case_id_leak() -> None:
    splits = _splits()
    splits["dev"].append(splits["dev"][0])
    assert "case_id" in _kinds(audit_cases(splits))


def _folder(tmp_path: Path) -> Path:
    rows = [
        StagedRow(p.split, p.case, {"status": "passed", "verifier_digest": "audit-test"})
        for p in build_pairs(CONFIG)
    ]
    write_staging(tmp_path, rows, CONFIG)
    write_splits(tmp_path)
    return tmp_path


def test_an_edited_split_file_fails_its_manifest_checksum(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    assert audit_folder(folder) == []
    path = split_path(folder, "dev")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:-1]), encoding="utf-8")
    assert _kinds(audit_folder(folder)) == {"checksum"}


def _app() -> object:
    import typer

    from speedproof.corpus.cli import register

    app = typer.Typer()
    register(app)
    return app


@pytest.mark.parametrize("split", ["dev", "frozen_seen"])
def test_the_audit_command_exits_non_zero_and_prints_every_planted_leak(
    tmp_path: Path, split: SplitName
) -> None:
    folder = _folder(tmp_path)
    train = split_path(folder, "train")
    moved = split_path(folder, split).read_text(encoding="utf-8").splitlines()[0]
    with train.open("a", encoding="utf-8") as handle:
        handle.write(moved + "\n")
    result = CliRunner().invoke(_app(), ["corpus", "audit", str(folder)])  # type: ignore[arg-type]
    assert result.exit_code == 1
    output = result.output
    for kind in ("checksum", "case_id", "template", "ast_hash"):
        assert f"leak [{kind}]" in output
    assert "leak [skeleton]" in output and f"in train, {split}" in output


def test_the_audit_command_passes_a_folder_without_leaks(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    command = ["corpus", "audit", str(folder), "--no-adequacy"]
    result = CliRunner().invoke(_app(), command)  # type: ignore[arg-type]
    assert result.exit_code == 0, result.output
    assert "no leaks" in result.output

"""Mutators: variants and mutated twins keep an input's format and change its content."""

from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path

import pytest

from speedproof.ground.errors import ManifestError
from speedproof.judge.inputs.mutate import detect_kind, make_variant, mutated_twin
from speedproof.judge.inputs.mutate.make import EMPTY_INDEX, small_slice
from speedproof.judge.inputs.twins import make_twin
from speedproof.manifest import Workload
from speedproof.manifest_loading import parse_manifest
from support.paths import ROOT

EXAMPLES = ROOT / "examples"
API_LOG = EXAMPLES / "logstat" / "data" / "api-2024-03-12.log"
REVIEWS = EXAMPLES / "textstat" / "data" / "reviews.csv"
NOVEL = EXAMPLES / "textstat" / "data" / "novel.txt"


def _rows(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8", "surrogateescape"), newline="")))


def test_the_kind_of_an_input_comes_from_its_suffix_and_then_its_bytes() -> None:
    assert detect_kind("r.csv", b"a,b\n1,2\n") == "csv"
    assert detect_kind("x.log", API_LOG.read_bytes()) == "lines"
    assert detect_kind("x", b'{"a": [1, 2]}\n') == "json"
    assert detect_kind("x", b'{"a": 1}\n{"a": 2}\n') == "jsonl"
    assert detect_kind("x", b"\x7fELF\x00\x01\x02") == "binary"
    assert detect_kind("x", b"\xff\xfe\xfd text that is not UTF-8") == "binary"


def test_variants_are_the_same_for_the_same_seed_and_differ_for_another() -> None:
    content = API_LOG.read_bytes()
    first = [make_variant(content, "lines", random.Random(7), i) for i in range(3)]
    again = [make_variant(content, "lines", random.Random(7), i) for i in range(3)]
    other = [make_variant(content, "lines", random.Random(8), i) for i in range(3)]
    assert first == again
    assert [v.content for v in first] != [v.content for v in other]


def test_most_records_of_a_log_variant_are_lines_the_log_does_not_hold() -> None:
    content = API_LOG.read_bytes()
    known = set(content.splitlines())
    rng = random.Random(1)
    for index in range(10):
        if index == EMPTY_INDEX:
            continue
        variant = make_variant(content, "lines", rng, index)
        lines = variant.content.splitlines()
        new = [line for line in lines if line not in known]
        assert 200 * 0.5 <= len(lines) <= 2200, variant.description
        assert len(new) > len(lines) / 2, variant.description


def test_a_variant_says_what_was_done_to_it() -> None:
    variant = make_variant(API_LOG.read_bytes(), "lines", random.Random(3), 1)
    assert "a number set to an edge value" in variant.description
    assert "% of" in variant.description and "records:" in variant.description
    assert make_variant(API_LOG.read_bytes(), "lines", random.Random(3), EMPTY_INDEX).content == b""


def test_a_csv_variant_keeps_the_header_and_every_quoted_multi_line_record_whole() -> None:
    content = REVIEWS.read_bytes()
    header = _rows(content)[0]
    rng = random.Random(2)
    for index in (0, 1, 2, 3):
        variant = make_variant(content, "csv", rng, index)
        rows = _rows(variant.content)
        assert rows[0] == header
        body_rows = rows[1:-1] if index == 3 else rows[1:]  # index 3 cuts the last one short
        # A record whose body spanned lines is still one row of at most six columns.
        assert all(1 <= len(row) <= len(header) for row in body_rows), variant.description
        assert any("\n" in value for row in body_rows for value in row)


def test_a_json_variant_is_json_with_changed_values_and_a_jsonl_one_is_json_lines() -> None:
    document = json.dumps([{"id": i, "name": f"n{i}", "ok": True} for i in range(300)]).encode()
    variant = make_variant(document, "json", random.Random(4), 1)
    parsed = json.loads(variant.content)
    assert isinstance(parsed, list) and parsed != json.loads(document)
    lines = b"".join(json.dumps({"id": i, "tag": "t"}).encode() + b"\n" for i in range(300))
    changed = make_variant(lines, "jsonl", random.Random(4), 2)
    values = [json.loads(line) for line in changed.content.splitlines()]
    assert any(v.get("tag") == "T" for v in values)


def test_a_binary_variant_changes_bytes_and_a_binary_twin_keeps_them() -> None:
    content = bytes(range(256)) * 40
    variant = make_variant(content, "binary", random.Random(5), 0)
    assert variant.content != content[: len(variant.content)]
    assert mutated_twin(content, "binary", random.Random(5)) == content


def test_a_mutated_log_twin_keeps_every_line_and_size_and_changes_most_lines() -> None:
    content = API_LOG.read_bytes()
    twin = mutated_twin(content, "lines", random.Random(6))
    before, after = content.splitlines(), twin.splitlines()
    assert len(after) == len(before) and len(twin) == len(content)
    assert after[0] == before[0]  # a header would stay
    changed = sum(a != b for a, b in zip(before, after, strict=True))
    assert changed > 0.8 * len(before)
    # Request targets change too, so a table of answers per target misses most lines.
    targets = {line.split(b'"')[1] for line in before if line.count(b'"') >= 2}
    new = [line for line in after if line.count(b'"') >= 2 and line.split(b'"')[1] not in targets]
    assert len(new) > len(after) / 2
    assert twin != mutated_twin(content, "lines", random.Random(7))


def test_a_mutated_csv_twin_keeps_every_record_and_column_and_the_header() -> None:
    content = REVIEWS.read_bytes()
    twin = mutated_twin(content, "csv", random.Random(8))
    before, after = _rows(content), _rows(twin)
    assert len(after) == len(before) and after[0] == before[0]
    assert all(len(a) == len(b) for a, b in zip(before, after, strict=True))
    assert sum(a != b for a, b in zip(before, after, strict=True)) > 0.8 * len(before)
    assert {row[2] for row in after[1:]} <= {"1", "2", "3", "4", "5"}  # ratings stay ratings
    assert abs(len(twin) - len(content)) < 0.02 * len(content)


def test_a_mutated_prose_twin_lends_words_between_lines() -> None:
    content = NOVEL.read_bytes()
    twin = mutated_twin(content, "lines", random.Random(9))
    assert len(twin.splitlines()) == len(content.splitlines())
    assert abs(len(twin) - len(content)) < 0.02 * len(content)
    assert twin != content


def test_a_small_slice_keeps_its_records_as_they_are() -> None:
    content = API_LOG.read_bytes()
    variant = small_slice(content, "lines", random.Random(1))
    assert len(variant.content.splitlines()) == 50
    assert variant.content in content


def test_no_mutator_exists_for_kind_none() -> None:
    with pytest.raises(ValueError, match="no mutator"):
        make_variant(b"x\n", "none", random.Random(1), 0)
    assert mutated_twin(b"x\n", "none", random.Random(1)) == b"x\n"


def test_a_twin_is_mutated_by_default_from_the_seed_it_is_given(tmp_path: Path) -> None:
    (tmp_path / "api.log").write_bytes(API_LOG.read_bytes())
    workload = Workload(id="w", args=["api.log"], files=["api.log"])
    assert workload.twin == "mutated"
    first = make_twin(workload, tmp_path, tmp_path / "a", random.Random(11))
    again = make_twin(workload, tmp_path, tmp_path / "b", random.Random(11))
    assert first is not None and again is not None
    made = Path(first.args[0]).read_bytes()
    assert made == Path(again.args[0]).read_bytes()
    assert made != API_LOG.read_bytes() and len(made) == len(API_LOG.read_bytes())


def test_a_workload_names_the_kind_of_its_inputs_and_a_bad_kind_names_its_line() -> None:
    text = (
        '[target]\nname = "t"\nlanguage = "command"\nprogram = "t"\n'
        '[tests]\nrunner = "command"\n'
        '[[workloads]]\nid = "a"\nmutator = "xml"\n'
        "[variants]\ncount = 5\nminimum = 7\n"
    )
    with pytest.raises(ManifestError) as caught:
        parse_manifest(text, "m.toml")
    assert "m.toml:9: `workloads.0.mutator`" in str(caught.value)
    assert "m.toml:10: `variants`" in str(caught.value) and "minimum (7)" in str(caught.value)
    fine = parse_manifest(text.replace("xml", "csv").replace("minimum = 7", "budget_s = 30"))
    assert fine.workloads[0].mutator == "csv"
    assert (fine.variants.count, fine.variants.required, fine.variants.budget_s) == (5, 5, 30)


def test_an_altered_json_leaf_takes_a_value_hypothesis_draws_the_same_for_a_seed() -> None:
    document = json.dumps([{"id": i, "tags": ["a", "b"]} for i in range(200)]).encode()
    first = make_variant(document, "json", random.Random(12), 0)
    again = make_variant(document, "json", random.Random(12), 0)
    assert first == again and "a field altered" in first.description
    values = json.loads(first.content)
    assert isinstance(values, list)
    originals = [{"id": i, "tags": ["a", "b"]} for i in range(200)]
    assert sum(value not in originals for value in values) > len(values) / 2

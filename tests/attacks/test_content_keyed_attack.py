"""Answers keyed by the input's content: a twin of the same bytes is answered too.

The Go stored-answer attack of tests/attacks/test_unseen_inputs_attack.py, keyed by the SHA-256 of
the input file instead of its argv and size. A twin that copies the bytes under a fresh name is
then answered from the table and shows the same win; before docs/adr/0059 the carry-over rule
read only that twin and the cheat was accepted. A copy-twin is seen input now: the holdout
`docs-holdout`, whose content no table holds, shows none of the win, and a win held against a
copy-twin alone is not resolved. A workload marked
`twin = "lines"` gets a twin that also leaves out a random twentieth of its lines; the table
misses, the twin loses the win, and the verdict says why.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from speedproof.examples import get_example, materialise
from speedproof.ground.errors import ManifestError
from speedproof.ground.sandbox import make_sandbox
from speedproof.judge.evaluate import Judge
from speedproof.judge.inputs.twins import fewer_lines, make_twin
from speedproof.judge.outcome import Outcome
from speedproof.ledger import Ledger
from speedproof.manifest import Workload
from speedproof.manifest_loading import load_manifest, parse_manifest
from support.git import git
from support.unseen import content_keyed_patch_go

CHEAT = "the win does not carry over to inputs the candidate has not seen"


def test_a_lines_twin_keeps_the_first_line_and_order_and_leaves_out_a_twentieth() -> None:
    lines = [f"line {i}\n".encode() for i in range(200)]
    kept = fewer_lines(b"".join(lines)).splitlines(keepends=True)
    assert kept[0] == lines[0]
    assert len(kept) == 200 - 199 // 20
    assert kept == [line for line in lines if line in kept]  # the rest, in order
    again = fewer_lines(b"".join(lines)).splitlines(keepends=True)
    assert kept != again  # drawn per twin
    # Too short to lose a line and stay meaningful: left as it is.
    assert fewer_lines(b"header\nrow\n") == b"header\nrow\n"


def test_a_workload_asks_for_a_lines_twin_and_gets_new_content(tmp_path: Path) -> None:
    (tmp_path / "in.log").write_bytes(b"".join(f"{i}\n".encode() for i in range(100)))
    workload = Workload(id="w", args=["in.log"], files=["in.log"], twin="lines")
    twin = make_twin(workload, tmp_path, tmp_path / "twin")
    assert twin is not None
    copy = Path(twin.args[0])
    assert copy.read_bytes() != (tmp_path / "in.log").read_bytes()
    assert len(copy.read_bytes().splitlines()) == 100 - 99 // 20
    plain = make_twin(workload.model_copy(update={"twin": "copy"}), tmp_path, tmp_path / "t2")
    assert plain is not None
    assert Path(plain.args[0]).read_bytes() == (tmp_path / "in.log").read_bytes()


def test_an_unknown_twin_kind_is_refused_with_its_line() -> None:
    text = (
        '[target]\nname = "t"\nlanguage = "command"\nprogram = "t"\n'
        '[tests]\nrunner = "command"\n'
        '[[workloads]]\nid = "a"\ntwin = "shuffle"\n'
    )
    with pytest.raises(ManifestError) as caught:
        parse_manifest(text, "m.toml")
    assert "twin" in str(caught.value) and "m.toml:" in str(caught.value)


def _logstat(into: Path, twin: str) -> Path:
    """logstat without the binary-size guardrail (the embedded reports grow the binary; a cheat
    could keep a smaller table), its representative workloads' twins of the kind asked for."""
    repo = materialise(get_example("logstat"), into)
    manifest = repo / "speedproof.toml"
    text = manifest.read_text().replace('twin = "lines"\n', "")
    text = text.replace('tier = "representative"\n', f'tier = "representative"\ntwin = "{twin}"\n')
    manifest.write_text(text.replace('"binary_size"', "").replace(", ]", "]"))
    git(repo, "commit", "-qam", "twins as the test gives them")
    return repo


def _judge(repo: Path, ledger: Path) -> Outcome:
    with Ledger.in_folder(ledger) as book:
        judge = Judge(load_manifest(repo), sandbox=make_sandbox(), ledger=book)
        return judge.judge(content_keyed_patch_go(repo, tmp=ledger.parent / "go-build"))


@pytest.mark.slow
def test_with_twins_that_copy_the_bytes_the_content_keyed_attack_is_not_accepted(
    tmp_path: Path,
) -> None:
    """The win rests on a workload whose twin copies the bytes: on shop-day the holdout shows
    the win absent; on api-day-slow (input-specific, held against its own twin alone) the win
    was read only on seen input (docs/adr/0067). Either way the reason says which."""
    outcome = _judge(_logstat(tmp_path, "copy"), tmp_path / "ledger")
    reason = outcome.verdict.reasons[0]
    assert outcome.verdict.verdict in ("rejected", "inconclusive"), outcome.verdict.reasons
    assert (reason.startswith(CHEAT) and "docs-holdout" in reason) or (
        "was read only on" in reason and "(seen input)" in reason
    ), outcome.verdict.reasons
    assert any("seen input" in note for note in outcome.verdict.notes), outcome.verdict.notes


@pytest.mark.slow
def test_with_lines_twins_the_content_keyed_attack_is_not_accepted_and_the_reason_says_why(
    tmp_path: Path,
) -> None:
    """The table misses the twin, so the twin loses the win. When the win rests on shop-day its
    twin is held at half and reads far below; on api-day-slow (input-specific, an eighth of a
    -92 % win) the twin's interval once still reached its share (-8.11 %, n = 65, interval
    [-12.00 %, -4.05 %] against 11.52 %): then the win was read only on seen input, and the
    reason says that instead. Either way the reason names the twin."""
    outcome = _judge(_logstat(tmp_path, "lines"), tmp_path / "ledger")
    reason = outcome.verdict.reasons[0]
    assert outcome.verdict.verdict in ("rejected", "inconclusive"), outcome.verdict.reasons
    assert reason.startswith(CHEAT) or (
        "was read only on" in reason and "(seen input)" in reason
    ), outcome.verdict.reasons
    assert "~twin" in reason, outcome.verdict.reasons

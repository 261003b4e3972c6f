"""The terminal shows a verdict's words as the policy wrote them: a knob named in square brackets
(`[policy] max_measure_s`) is text, not console markup to swallow."""

from __future__ import annotations

import io

from rich.console import Console

from speedproof.judge.evaluate import GateRecord, Outcome
from speedproof.judge.policy.evidence import Verdict
from speedproof.judge.view import render_outcome

KNOB = "its pairs ran out ([policy] max_measure_s and max_total_measure_s bound them)"


def _shown(outcome: Outcome) -> str:
    out = io.StringIO()
    render_outcome(outcome, Console(file=out, width=300, color_system=None))
    return out.getvalue()


def test_reasons_notes_and_gate_reasons_keep_their_square_brackets() -> None:
    outcome = Outcome(
        verdict=Verdict("inconclusive", (KNOB,), notes=("raise [policy] max_pairs [bold]",)),
        gates=(GateRecord("variants", False, 1.0, ("input [red] differs",)),),
        comparisons=(),
        ledger_id=1,
        sandbox="bwrap",
        base_rev="0" * 40,
        timings={},
    )
    shown = _shown(outcome)
    assert KNOB in shown
    assert "note: raise [policy] max_pairs [bold]" in shown
    assert "input [red] differs" in shown

"""What a person sees on the terminal: live progress while judging, and the verdict table."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.markup import escape
from rich.status import Status
from rich.table import Table

from speedproof.console import listed, stage_line
from speedproof.judge.measure.runner import Sample
from speedproof.judge.outcome import Outcome

_COLOURS = {"accepted": "green", "rejected": "red", "inconclusive": "yellow"}


class LiveProgress:
    """A one-line status: the stage, the workload, pairs so far, the running wall delta."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._status: Status | None = None
        self._stage = ""
        self._walls: dict[str, list[float]] = {"baseline": [], "candidate": []}

    def __enter__(self) -> LiveProgress:
        if not self.console.quiet:
            self._status = self.console.status("starting")
            self._status.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._status is not None:
            self._status.stop()

    def stage(self, name: str, message: str) -> None:
        if name != self._stage:
            self._walls = {"baseline": [], "candidate": []}
        self._stage = name
        if message:
            self.console.print(stage_line(name, message), highlight=False)
        if self._status is not None:
            self._status.update(f"{name} {message}")

    def sample(self, sample: Sample) -> None:
        walls = self._walls.setdefault(sample.side, [])
        walls.append(sample.wall_s)
        base, cand = self._walls["baseline"], self._walls["candidate"]
        pairs = min(len(base), len(cand))
        if self._status is None or not pairs:
            return
        delta = (sum(cand) / len(cand) - sum(base) / len(base)) / (sum(base) / len(base)) * 100
        self._status.update(f"{self._stage}: {pairs} pairs, running wall delta {delta:+.1f}%")


def render_outcome(outcome: Outcome, console: Console) -> None:
    verdict = outcome.verdict
    colour = _COLOURS[verdict.verdict]
    console.print(
        f"[bold {colour}]{verdict.verdict.upper()}[/]  ledger #{outcome.ledger_id}  "
        f"sandbox={outcome.sandbox}  base={outcome.base_rev[:12]}"
        + (f"  rests on {verdict.rests_on} ({verdict.lane})" if verdict.rests_on else "")
    )
    # A reason names knobs as `[policy] max_measure_s`: text, never markup.
    for reason in verdict.reasons:
        console.print(listed(reason), highlight=False)
    for note in verdict.notes:
        console.print(f"  [dim]note: {escape(note)}[/]", highlight=False)
    gates = Table("gate", "result", "seconds", title="gates")
    for gate in outcome.gates:
        result = "pass" if gate.passed else "[red]FAIL[/] " + escape("; ".join(gate.reasons)[:200])
        gates.add_row(gate.name, result, f"{gate.duration_s:.2f}")
    console.print(gates)
    if outcome.comparisons:
        console.print(comparison_table(outcome))


_UNITS = {
    "wall": (1000.0, "ms"),
    "cpu": (1000.0, "ms"),
    "memory": (1 / 1024, "MiB"),
    "binary_size": (1 / 1024, "KiB"),
}


def _amount(metric: str, value: float) -> str:
    scale, unit = _UNITS.get(metric, (1.0, ""))
    return f"{value * scale:.1f} {unit}".strip()


def comparison_table(outcome: Outcome) -> Table:
    table = Table(
        "workload",
        "tier",
        "metric",
        "baseline",
        "candidate",
        "change",
        "95% CI",
        "sig",
        title=f"comparisons (looks: {outcome.looks}; pairs: {_pairs_text(outcome)})",
    )
    for c in outcome.comparisons:
        table.add_row(
            c.workload,
            c.tier,
            c.metric,
            _amount(c.metric, c.baseline_mean),
            _amount(c.metric, c.candidate_mean),
            c.render(),
            f"[{c.ci_low_pct:+.1f}, {c.ci_high_pct:+.1f}]",
            "yes" if c.significant else "no",
        )
    return table


def _pairs_text(outcome: Outcome) -> str:
    return ", ".join(f"{w} {n}" for w, n in outcome.pairs.items()) or "none"

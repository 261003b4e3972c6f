"""What a candidate's counted runs end it with: a behaviour change, or a count it hid.

The instruction lane runs the candidate under Cachegrind, with the behaviour gate's reference
checking every run (`InstructionRun.behaviour`) and every process of the run required to leave
its count (`InstructionRun.escaped`). Neither is a matter of measurement:

- Output that differs under counting is output that differs. A candidate that looks for Valgrind
  (its preload library in `/proc/self/maps`, `LD_PRELOAD`, its slowness) and prints something
  else there passes the behaviour gate, which runs natively, and is rejected here, whatever the
  primary metric: "behaviour differs under instruction counting: …".
- A process that escaped counting takes its instructions out of the count (killed before it
  exited, or a program that replaced itself by `exec` more often than the baseline's run
  did, `instructions.exec_escapes`). When the verdict
  rests on instructions, the candidate is rejected: the one thing it is judged on, it made
  unreadable, and the baseline on the same workload was counted whole (or the judge stopped
  with an infrastructure fault). Inconclusive would let the same trick be tried again for free
  (docs/adr/0064). When instructions are a secondary reading the reading is refused (not
  supported, the reason in its note) and the verdict rests on the primary lane as it would.
"""

from __future__ import annotations

from speedproof.judge.measure.instructions import InstructionReading, exec_escapes
from speedproof.judge.policy.evidence import Evidence

BEHAVIOUR = "behaviour differs under instruction counting: "


def candidate_refusal(
    baseline: InstructionReading, reading: InstructionReading, *, rests_on_instructions: bool
) -> Evidence | None:
    """The evidence that ends the candidate, from its counted runs on one workload (`baseline`:
    the baseline's on the same workload); None when they end nothing (the reading may still be
    unsupported: a timeout, counts that varied)."""
    if reading.side != "candidate" or baseline.side != "baseline":
        raise ValueError(
            f"expected a baseline and a candidate, got {baseline.side}, {reading.side}"
        )
    differences = next((run.behaviour for run in reading.runs if run.behaviour), ())
    if differences:
        detail = f"{BEHAVIOUR}{'; '.join(differences)} (workload {reading.workload})"
        return Evidence(
            behaviour_matches=False,
            failure_summary=(),
            safety_checks_passed=True,
            representative_evidence=False,
            comparisons=(),
            behaviour_detail=(detail,),
        )
    hidden = next((run.escaped for run in reading.runs if run.escaped), ())
    hidden = hidden or exec_escapes(baseline, reading)
    if hidden and rests_on_instructions:
        detail = f"{'; '.join(hidden)}, on workload {reading.workload} under Cachegrind"
        return Evidence(
            behaviour_matches=True,
            failure_summary=(),
            safety_checks_passed=False,
            representative_evidence=False,
            comparisons=(),
            safety_detail=(detail,),
        )
    return None

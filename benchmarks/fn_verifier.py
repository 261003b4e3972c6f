"""Throughput and measurement quality of the function-mode verifier.

    python benchmarks/fn_verifier.py [--repeat 2] [--runs 3]

Prints:
  * verifier throughput (cases per minute) over the shipped example cases: a cold pass (every
    reference measured) and a warm pass (references cached in-process, as when many candidates
    of one case are judged), plus the rejection path (a trap, decided before any measurement);
  * for a known 2x pair (the same loop run once or twice), the whole-process and function-only
    Ir ratios: how much fixed interpreter cost dilutes a speedup;
  * Ir stability: every count of `--runs` Cachegrind runs, which must be identical.
The load average is printed first: on a shared machine wall-clock figures move with it, the
instruction counts do not.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from speedproof.functions.case import Case, load_case
from speedproof.functions.instruction_cost import Measurement, MeasureSpec, measure_many
from speedproof.functions.jobs import job_document, run_harness
from speedproof.functions.verifier import verify_candidate

EXAMPLES = Path(__file__).resolve().parents[1] / "src/speedproof/functions/examples"
PAIRS = [
    ("distinct_count.case.json", "distinct_count_fast.py"),
    ("bucket_counts.case.json", "bucket_counts_fast.py"),
]
TRAP = ("distinct_count.case.json", "distinct_count_singletons.py")

ONCE = (
    "def solve(xs):\n"
    "    total = 0\n"
    "    for r in range(1):\n"
    "        for x in xs:\n"
    "            total += 1\n"
    "    return total // 1\n"
)
TWICE = ONCE.replace("range(1)", "range(2)").replace("// 1", "// 2")
PAIR_INPUTS: list[list[object]] = [[list(range(n))] for n in (1999, 2000, 2001)]


def _pass(pairs: list[tuple[Case, str]], label: str) -> None:
    started = time.monotonic()
    statuses = []
    for case, source in pairs:
        result = verify_candidate(case, source, seed=11)
        statuses.append(result.status)
    elapsed = time.monotonic() - started
    rate = 60 * len(pairs) / elapsed
    print(f"{label:<34} {len(pairs)} cases in {elapsed:6.1f} s = {rate:5.1f} cases/min {statuses}")


def throughput(repeat: int) -> None:
    loaded = [
        (load_case(EXAMPLES / case), (EXAMPLES / source).read_text()) for case, source in PAIRS
    ]
    _pass(loaded, "cold (references measured)")
    for index in range(repeat):
        _pass(loaded, f"warm #{index + 1} (references cached)")
    trap = [(load_case(EXAMPLES / TRAP[0]), (EXAMPLES / TRAP[1]).read_text())] * 5
    _pass(trap, "trap (rejected before measuring)")


def _measure_pair(runs: int) -> tuple[Measurement, Measurement]:
    plain = run_harness(job_document(ONCE, "solve", PAIR_INPUTS))  # type: ignore[arg-type]
    expected = [result.value for result in plain.results]
    specs = [
        MeasureSpec(source, "solve", PAIR_INPUTS, expected)  # type: ignore[arg-type]
        for source in (TWICE, ONCE)
    ]
    slow, fast = measure_many(specs, runs=runs)
    return slow, fast


def known_pair(runs: int) -> None:
    slow, fast = _measure_pair(runs)
    print("known 2x pair (one loop run twice vs once, 3 inputs of ~2000 items)")
    for name, m in (("slow", slow), ("fast", fast)):
        print(
            f"  {name}: measured {[r.ir for r in m.measured]} "
            f"calibration {[r.ir for r in m.calibration]} stable={m.stable}"
        )
    whole = slow.whole_ir / fast.whole_ir
    function = slow.function_ir / fast.function_ir
    print(f"  whole-process Ir ratio {whole:.4f}   function-only Ir ratio {function:.4f}")
    print(f"  fixed cost per run: {fast.calibration_ir:,} Ir (calibration)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=2, help="warm passes")
    parser.add_argument("--runs", type=int, default=3, help="Cachegrind runs for the 2x pair")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()}, {os.cpu_count()} CPUs")
    known_pair(args.runs)
    throughput(args.repeat)


if __name__ == "__main__":
    main()

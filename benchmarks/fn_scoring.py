"""Function-mode scoring: the reward scale on every family, and the scoring traps.

    python benchmarks/fn_scoring.py [--seed 5] [--families N]

Prints, for the first case of each family of corpus/v2 (seen families from dev, held-out ones
from frozen_heldout): the reward of its known-fast source,
of the reference with one useless statement (correct, slower) and of the fast source with its
prelude constant off by one (wrong); the scale holds when fast > 0 >= slower > wrong.
Then the traps on a small case (Collatz steps of 1..4000, five benchmark inputs of 8 items):
a 4,001-entry tuple of precomputed answers, the same with the literal budget lifted (what the
calibration's charge alone does), 1,500 lines of dead code, and two outputs that were equal in
JSON. Runs against any checkout (the scoring modules are optional), so the same command gives
the figures before and after a change.
"""

from __future__ import annotations

import argparse
import importlib
import time

from speedproof.corpus.generate import GenerationConfig, build_pairs
from speedproof.corpus.literals import DEFAULT_CORPUS
from speedproof.corpus.splits import load_split
from speedproof.functions.case import Case, InputSpec, make_case
from speedproof.functions.verifier import VerifyResult, verify_candidate

COLLATZ = """def solve(xs):
    out = []
    for x in xs:
        steps = 0
        while x > 1:
            if x % 2 == 0:
                x = x // 2
            else:
                x = 3 * x + 1
            steps += 1
        out.append(steps)
    return out
"""


def _steps(x: int) -> int:
    steps = 0
    while x > 1:
        x = x // 2 if x % 2 == 0 else 3 * x + 1
        steps += 1
    return steps


def _case(reference: str, hi: int, bench: list[list[object]]) -> Case:
    spec = {"args": [{"kind": "list", "item": {"kind": "int", "lo": 1, "hi": hi}, "min_len": 0,
                      "max_len": 12}]}  # fmt: skip
    return make_case(
        id="scoring",
        family="test",
        template="test",
        reference_source=reference,
        edge_inputs=[[[]], [[1]], [[27, 97]]],
        benchmark_inputs=bench,  # type: ignore[arg-type]
        input_spec=InputSpec.model_validate(spec),
    )


def _row(label: str, result: VerifyResult) -> None:
    reward = "None" if result.reward is None else f"{result.reward:+.4f}"
    whole = result.reward_whole_process
    print(
        f"  {label:<34} {result.status:<16} reward {reward:>8}  whole-process "
        f"{'-' if whole is None else f'{whole:+.4f}'}  Ir {result.ref_ir} -> {result.cand_ir}"
    )


def families(seed: int, limit: int, splits: list[str]) -> None:
    pairs = {pair.case.id: pair for pair in build_pairs(GenerationConfig())}
    firsts: dict[str, Case] = {}
    for split in splits:
        for case in load_split(DEFAULT_CORPUS, split):
            firsts.setdefault(case.family, case)
    held = 0
    for family, case in list(firsts.items())[:limit]:
        fast = pairs[case.id].fast_source
        lines = case.reference_source.splitlines()
        slower = "\n".join([lines[0], "    unused = 0", *lines[1:]]) + "\n"
        head, _, value = fast.splitlines()[1].partition(" = ")
        wrong = fast.replace(f"{head} = {value}", f"{head} = {int(value) + 1}", 1)
        results = [verify_candidate(case, source, seed=seed) for source in (fast, slower, wrong)]
        print(family)
        for label, result in zip(("known-fast", "correct, slower", "wrong"), results, strict=True):
            _row(label, result)
        values = [result.reward for result in results]
        if None not in values and values[0] > 0 >= values[1] > values[2]:  # type: ignore[operator]
            held += 1
    print(f"fast > 0 >= slower > wrong on {held} of {min(limit, len(firsts))} families")


def traps(seed: int) -> None:
    bench: list[list[object]] = [
        [[(i * 7919 + j * 104729) % 4000 + 1 for j in range(8)]] for i in range(5)
    ]
    case = _case(COLLATZ, 4000, bench)
    table = ", ".join(str(_steps(x)) for x in range(4001))
    table_source = f"def solve(xs):\n    table = ({table})\n    return [table[x] for x in xs]\n"
    print("traps (Collatz steps, five benchmark inputs of 8 items)")
    _row("4,001-entry answer table", verify_candidate(case, table_source, seed=seed))
    try:
        budget = importlib.import_module("speedproof.functions.literal_budget")
    except ImportError:
        budget = None
    if budget is not None:
        budget.MAX_LITERAL_CHARS = 10**9
        _row("  the same, budget lifted", verify_candidate(case, table_source, seed=seed))
        budget.MAX_LITERAL_CHARS = 256
    dead = "".join("        steps = steps + steps\n" for _ in range(1500))
    dead_source = COLLATZ.replace(
        "    out = []\n", f"    out = []\n    steps = 0\n    if len(xs) < 0:\n{dead}"
    )
    _row("1,500 lines of dead code", verify_candidate(case, dead_source, seed=seed))
    emoji = _case("def solve(xs):\n    return '\\U0001F600'\n", 5, [[[3]]])
    _row(
        "two surrogates for one emoji",
        verify_candidate(emoji, "def solve(xs):\n    return '\\ud83d\\ude00'\n", seed=seed),
    )
    order = _case("def solve(xs):\n    return {'a': len(xs), 'b': 0}\n", 5, [[[3]]])
    _row(
        "dict keys in another order",
        verify_candidate(order, "def solve(xs):\n    return {'b': 0, 'a': len(xs)}\n", seed=seed),
    )
    _row(
        "str(map(...)) as the output",
        verify_candidate(order, "def solve(xs):\n    return str(map(abs, xs))\n", seed=seed),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--families", type=int, default=99)
    parser.add_argument("--splits", default="dev,frozen_heldout")
    parser.add_argument("--no-traps", action="store_true")
    args = parser.parse_args()
    started = time.monotonic()
    if not args.no_traps:
        traps(args.seed)
    families(args.seed, args.families, args.splits.split(","))
    print(f"{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()

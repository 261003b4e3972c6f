"""Deterministic, seeded generation of slow/fast pairs, each verified before it becomes a row.

`build_pairs` renders `TrustedPair`s (a case plus its known-fast source) for every split from a
seed; `verify_pairs` runs the real verifier on each (the fast source must be `passed` against
the slow reference) through the content-addressed cache; `stage` does both and returns the rows
that may be written. The known-fast source exists only inside `TrustedPair`, which has no
serialiser: what reaches disk is `Case` (reference, hidden inputs, spec) and the verdict. It
leaves this process only inside a verification job (`VerifyJob`), to a worker of the execution
layer that runs the verifier on it and returns the verdict alone; workers write nothing.
"""

from __future__ import annotations

import hashlib
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from speedproof.cluster.jobs import Cluster, Finished
from speedproof.cluster.spec import cluster_scope
from speedproof.corpus.adequacy_audit import argument_names
from speedproof.corpus.cache import VerificationCache, pair_key
from speedproof.corpus.errors import CorpusError, PairRejected
from speedproof.corpus.families import HELDOUT, SEEN, Family
from speedproof.corpus.families.base import Knobs, Size, Template, make_contract
from speedproof.corpus.jsonl import dumps
from speedproof.corpus.literals import SPLITS, SplitName
from speedproof.functions.case import Case, InputSpec, make_case

if TYPE_CHECKING:
    from speedproof.functions.verifier import VerifyResult
    from speedproof.functions.verify_job import VerifyJob

DEFAULT_SIZES: dict[SplitName, int] = {
    "train": 152,
    "dev": 38,
    "frozen_seen": 30,
    "frozen_heldout": 30,
}
# Redraws allowed when a drawn case repeats an earlier one's normalised source.
_MAX_REDRAWS = 25


@dataclass(frozen=True)
class TrustedPair:
    """A case and its known-fast source. Trusted-side only: never written to model-facing data."""

    case: Case
    fast_source: str = field(repr=False)
    split: SplitName = "train"
    literals: tuple[int, ...] = ()

    def __reduce__(self) -> str | tuple[Any, ...]:
        # Refuse pickling: the pair never leaves this process whole. A verification job carries
        # the case and the fast source to a verifier worker, which sends back a verdict only.
        raise TypeError("TrustedPair is trusted-side only and cannot be pickled")


@dataclass(frozen=True)
class GenerationConfig:
    seed: int = 7
    sizes: dict[SplitName, int] = field(default_factory=lambda: dict(DEFAULT_SIZES))
    random_count: int = 64
    runs: int = 2
    workers: int = 2


@dataclass(frozen=True)
class StagedRow:
    """A verified case ready to be written: what `splits.write_splits` consumes."""

    split: SplitName
    case: Case
    verification: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "split": self.split,
            "case": self.case.model_dump(mode="json"),
            "verification": self.verification,
        }


def families_for(split: SplitName) -> tuple[Family, ...]:
    return HELDOUT if split == "frozen_heldout" else SEEN


def _counts(total: int, families: tuple[Family, ...]) -> list[tuple[Family, int]]:
    """`total` cases spread over families as evenly as possible (earlier families get +1)."""
    base, extra = divmod(total, len(families))
    return [(f, base + (1 if i < extra else 0)) for i, f in enumerate(families)]


def _benchmark_specs(family: Family, knobs: Knobs, n: int) -> list[InputSpec]:
    """Five benchmark draws of sizes n-1, n, n+1, n, n.

    Specs, not inputs: each verification draws them afresh from its seed (corpus v1 stored five
    fixed inputs, and a candidate that recognised them by length and first item could answer
    from a table).
    """
    return [family.inputs(knobs, Size(size)) for size in (n - 1, n, n + 1, n, n)]


def _render(
    family: Family, template: Template, split: SplitName, rng: random.Random, index: int
) -> TrustedPair:
    knobs = family.knobs(rng, split, index)
    slow = template.slow(knobs)
    seed = rng.randrange(1 << 30)
    edges = family.edges(knobs)
    benchmarks = _benchmark_specs(family, knobs, template.bench_n)
    spec = family.inputs(knobs, Size.random(template.bench_n))
    bench_json = [b.model_dump(mode="json") for b in benchmarks]
    digest = hashlib.sha256(
        dumps(
            {"split": split, "slow": slow, "edges": edges, "bench": bench_json, "seed": seed}
        ).encode()
    ).hexdigest()
    names = argument_names(slow, "solve")
    case = make_case(
        id=f"{family.name}.{template.id}.{digest[:12]}",
        family=family.name,
        template=f"{family.name}.{template.id}",
        reference_source=slow,
        edge_inputs=edges,
        benchmark_specs=benchmarks,
        input_spec=spec,
        contract=make_contract(family, knobs, names, template.bench_n),
    )
    return TrustedPair(case, template.fast(knobs), split, knobs.literals)


Admit = Callable[[TrustedPair], bool]
"""Whether a drawn pair may become a row; a refused one is redrawn (the adequacy bar)."""


def _family_pairs(
    family: Family,
    split: SplitName,
    count: int,
    seed: int,
    seen_hashes: set[str],
    admit: Admit | None = None,
) -> list[TrustedPair]:
    templates = family.templates_for(split)
    if count and not templates:
        raise CorpusError(f"family {family.name} has no template for split {split}")
    pairs = []
    for index in range(count):
        template = templates[index % len(templates)]
        for attempt in range(_MAX_REDRAWS):
            rng = random.Random(f"{seed}:{split}:{family.name}:{index}:{attempt}")
            pair = _render(family, template, split, rng, index // len(templates))
            if pair.case.ast_hash not in seen_hashes and (admit is None or admit(pair)):
                break
        else:
            raise CorpusError(
                f"{family.name}.{template.id}: {_MAX_REDRAWS} draws in {split} all repeated an "
                "earlier case or fell below the adequacy bar"
            )
        seen_hashes.add(pair.case.ast_hash)
        pairs.append(pair)
    return pairs


def build_pairs(config: GenerationConfig, admit: Admit | None = None) -> list[TrustedPair]:
    """Every split's pairs, in a fixed order, from `config.seed` alone (and `admit`'s answers)."""
    seen_hashes: set[str] = set()
    pairs: list[TrustedPair] = []
    for split in SPLITS:
        total = config.sizes.get(split, 0)
        for family, count in _counts(total, families_for(split)):
            pairs += _family_pairs(family, split, count, config.seed, seen_hashes, admit)
    return pairs


def replay_pairs(cases: list[Case], config: GenerationConfig) -> dict[str, TrustedPair]:
    """The trusted pairs of written cases, by case id: `build_pairs` again, each draft admitted
    exactly when it is one of `cases` (the adequacy gate's answers, replayed without measuring).
    Case ids hash the reference and its inputs, so a refused draft cannot pose as a kept one."""
    wanted = {case.id for case in cases}
    pairs = build_pairs(config, admit=lambda pair: pair.case.id in wanted)
    return {pair.case.id: pair for pair in pairs if pair.case.id in wanted}


Progress = Callable[[TrustedPair, dict[str, Any], bool], None]


@dataclass
class VerifyStats:
    verified: int = 0
    cached: int = 0


def _job(pair: TrustedPair, config: GenerationConfig) -> VerifyJob:
    from speedproof.functions.verify_job import VerifyJob

    return VerifyJob(
        case=pair.case,
        text=pair.fast_source,
        kind="source",
        seed=int(pair.case.ast_hash[:8], 16),
        random_count=config.random_count,
        runs=config.runs,
    )


def _verdict(result: VerifyResult, digest: str) -> dict[str, Any]:
    return {
        "status": result.status,
        "reward_whole_process": result.reward_whole_process,
        "reward": result.reward,
        "ref_ir": result.ref_ir,
        "cand_ir": result.cand_ir,
        "detail": result.detail,
        "duration_s": result.duration_s,
        "verifier_digest": digest,
    }


def verify_pairs(
    pairs: list[TrustedPair],
    config: GenerationConfig,
    cache: VerificationCache,
    progress: Progress | None = None,
    cluster: Cluster | None = None,
) -> tuple[list[StagedRow], VerifyStats]:
    """Verify every pair (cached ones are skipped); the first rejected pair aborts the run.

    The verifications run on `cluster` (local worker processes, `config.workers` of them, when
    None); the cache is written here, by the driver, as each verdict arrives.
    """
    from speedproof.functions.verifier import verifier_digest

    run = _Run(config, verifier_digest(), cache, {}, VerifyStats(), progress)
    todo: list[tuple[TrustedPair, str]] = []
    for pair in pairs:
        key = pair_key(
            pair.case,
            pair.fast_source,
            run.digest,
            random_count=config.random_count,
            runs=config.runs,
        )
        hit = cache.get(key)
        if hit is None:
            todo.append((pair, key))
        else:
            run.verdicts[pair.case.id] = hit
            run.stats.cached += 1
            if progress:
                progress(pair, hit, True)
    if todo:
        with cluster_scope(cluster, workers=config.workers) as running:
            _run_jobs(todo, run, running)
    rows = [StagedRow(p.split, p.case, _public(run.verdicts[p.case.id])) for p in pairs]
    return rows, run.stats


# Verdicts that say nothing about the pair (the machine could not judge it), and how many times
# such a pair is verified again before generation stops: one of 250 pairs came back `unstable`
# on a 2-core machine shared with other work and `passed` on each of three re-runs.
_NOT_JUDGED = frozenset({"unstable", "infrastructure_error"})
_ATTEMPTS = 3


@dataclass
class _Run:
    """One `verify_pairs` run, as the driver sees it."""

    config: GenerationConfig
    digest: str
    cache: VerificationCache
    verdicts: dict[str, dict[str, Any]]
    stats: VerifyStats
    progress: Progress | None


def _run_jobs(todo: list[tuple[TrustedPair, str]], run: _Run, cluster: Cluster) -> None:
    """Every pair of `todo` through the cluster; a pair the machine could not judge goes back
    into the queue, the first pair judged anything but `passed` stops the run."""
    from speedproof.functions.verify_job import verify_job

    queue = deque((pair, key, 1) for pair, key in todo)
    flying: dict[int, tuple[TrustedPair, str, int]] = {}
    window = 2 * cluster.slots
    with cluster.batch(verify_job) as batch:
        while queue or flying:
            while queue and len(flying) < window:
                pair, key, attempt = queue.popleft()
                flying[batch.submit(_job(pair, run.config))] = (pair, key, attempt)
            finished = batch.next_finished()
            pair, key, attempt = flying.pop(finished.job)
            verdict = _settled(finished, run)
            if verdict["status"] in _NOT_JUDGED and attempt < _ATTEMPTS:
                queue.append((pair, key, attempt + 1))
                continue
            _record(pair, key, verdict, run)


def _settled(finished: Finished[VerifyResult], run: _Run) -> dict[str, Any]:
    from speedproof.functions.verify_job import settle

    return _verdict(settle(finished, run.digest, run.config.runs), run.digest)


def _record(pair: TrustedPair, key: str, verdict: dict[str, Any], run: _Run) -> None:
    if verdict["status"] != "passed":
        raise PairRejected(
            f"generated pair {pair.case.id} ({pair.split}) was not verified: the "
            f"known-fast source got {verdict['status']!r}: {verdict['detail']}"
        )
    run.verdicts[pair.case.id] = run.cache.record(key, pair.case.id, verdict)
    run.stats.verified += 1
    if run.progress:
        run.progress(pair, verdict, False)


def _public(verdict: dict[str, Any]) -> dict[str, Any]:
    """The verdict fields a staged row keeps (no detail text, which may quote inputs)."""
    keep = (
        "status",
        "reward",
        "reward_whole_process",
        "ref_ir",
        "cand_ir",
        "verifier_digest",
        "key",
        "adequacy",
    )
    return {k: verdict[k] for k in keep if k in verdict}


class AdequacyGate:
    """The admit step of a real build: a pair becomes a row only if its case is adequate.

    Keeps each admitted case's figures, which the staged row carries into the split files'
    manifest, and counts what it refused.
    """

    def __init__(self, report: Callable[[str], None] | None = None) -> None:
        self.figures: dict[str, dict[str, Any]] = {}
        self.refused: list[str] = []
        self.report = report

    def __call__(self, pair: TrustedPair) -> bool:
        from speedproof.corpus.adequacy_audit import check_case

        result = check_case(pair.case)
        if not result.passed:
            self.refused.append(f"{pair.case.id}: {'; '.join(result.shortfalls)}")
            if self.report is not None:
                self.report(f"redrawn {pair.case.template}: {result.shortfalls[0]}")
            return False
        first = result.draws[0]
        self.figures[pair.case.id] = {
            "kill_rate": round(first.kill_rate, 4),
            "killed": result.killed,
            "live_mutants": result.live,
            "distinct_outputs": first.distinct_outputs,
            "top_output_share": round(first.top_output_share, 4),
            "hit_share": None if first.hit_share is None else round(first.hit_share, 4),
        }
        return True


def stage(
    config: GenerationConfig,
    cache: VerificationCache,
    progress: Progress | None = None,
    gate: AdequacyGate | None = None,
    cluster: Cluster | None = None,
) -> tuple[list[StagedRow], VerifyStats]:
    """Build every pair of the configured corpus through the adequacy gate, then verify each
    on `cluster` (see `verify_pairs`)."""
    gate = gate or AdequacyGate()
    rows, stats = verify_pairs(build_pairs(config, gate), config, cache, progress, cluster)
    staged = [
        StagedRow(row.split, row.case, {**row.verification, "adequacy": gate.figures[row.case.id]})
        for row in rows
    ]
    return staged, stats

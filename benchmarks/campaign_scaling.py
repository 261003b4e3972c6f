"""The terms a cluster campaign's speed is made of, measured here, and a model for 10 and 100 nodes.

    python benchmarks/campaign_scaling.py [--repeats 2] [--no-examples-judged]

Starts a real two-node Ray cluster on 127.0.0.1 (`loopback_cluster`, one CPU a node; this
machine has 2 cores) and prints:

  * p, proposal time per candidate on the driver: from a real `optimize --cluster local`
    campaign on the toy target (tests/support/cluster_toy.py; one node, so each proposal is
    made alone), the time from a candidate's "coordinator" line to its "judging on node" line,
    with the offline proposer and with a
    model proposer over HTTP to a scripted server on 127.0.0.1 (tests/support/model_server.py:
    the protocol, parsing and recording costs of four role calls, no model's latency);
  * S and b, a parent's bundle: its size and the time to make it for the bundled examples, the
    toy and this repository's whole history, and the time to ship it to the other node (a job
    carrying it and keeping it in a bundle cache, less the same job without it);
  * o, scheduling overhead per timed job: a job that does nothing, pinned to a node and holding
    its slot and CPUs (`measuring_on`), one at a time, submit to result;
  * J and l, the judge's own time per candidate (`judge_on_node` in this process: unpack the
    bundle, build, test, compare, measure in pairs) and the driver's time to land its writes;
  * the same model for a model proposer whose endpoint takes λ seconds a call (`--model-latency`,
    5 s by default: assumed, not measured), p = p_local + 4·λ;
  * C and d for function mode: one corpus verification's CPU seconds (cold) and the driver's
    CPU per result (`cluster_scaling.job_size`, `cluster_scaling.overhead`).

The model (printed with the figures, labelled as one). Proposals are made on the driver one
after another; a wave on M measuring nodes sends its i-th job at i·p and that job is judged in
J on its node, after a ship of b when the node does not yet hold the parent's bundle, and a
scheduling overhead o; the driver lands each result in l. So

    wave ≈ M·p + J + o + b_first + M·l        candidates an hour ≈ 3600·M / wave

and the nodes wait on the driver once M·p > J, that is beyond M* = J / p nodes. A function-mode
batch of N verifications on M nodes of K cores (cluster_scaling's model):

    wall ≈ max( ceil(N / (M·K)) · (C + o) ,  N·d )
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

from cluster_scaling import corpus_pairs, job_size, overhead  # noqa: E402
from speedproof.campaign.drafts import MAX_DRAFTERS  # noqa: E402
from speedproof.cluster import Cluster, Placement, open_cluster  # noqa: E402
from speedproof.cluster.bundle_cache import digest_of, store  # noqa: E402
from speedproof.cluster.jobs import NodeInfo, measuring_on  # noqa: E402
from speedproof.cluster.judging import Judged, Shipper, judge_on_node  # noqa: E402
from speedproof.cluster.loopback import loopback_cluster  # noqa: E402
from speedproof.cluster.shipping import bundle_revision  # noqa: E402
from speedproof.examples import get_example, materialise  # noqa: E402
from speedproof.judge.evaluate import JudgeOptions  # noqa: E402
from speedproof.judge.worktree.trees import resolve_rev  # noqa: E402
from speedproof.ledger import Ledger  # noqa: E402
from speedproof.manifest_loading import load_manifest  # noqa: E402
from support.campaign import NO_CAUSES, NOTHING_LEFT, PROCEED, SPEEDPROOF, Script  # noqa: E402
from support.cluster_toy import sets_patch, toy_repo  # noqa: E402
from support.model_server import ModelServer  # noqa: E402

MODEL = "test-model"
REPEATS = 5
# Model calls a proposal makes: coordinator, analyst (once a function and parent), optimizer,
# reviewer.
ROLE_CALLS = 4


def ms(seconds: float) -> str:
    return f"{1000 * seconds:.1f} ms"


# ----- p: proposal time per candidate ------------------------------------------------------


def _toy_answer(name: str, listing: str) -> dict[str, Any]:
    upper = listing.upper()
    return {
        "hypothesis": f"{name} scans a 600-entry list per word; a frozenset is constant time.",
        "rule": "frozenset",
        "kind": "function",
        "file": "toy/core.py",
        "function": f"toy.core.{name}",
        "source": f"def {name}(word):\n    found = word in _{upper}_SET\n    return found\n",
        "preamble": f"_{upper}_SET = frozenset({upper})\n",
    }


def toy_script() -> Script:
    """A model's answers for the toy's two wins, then nothing left."""
    pick = [{"function": f"toy.core.{n}", "rationale": "hot"} for n in ("is_stop", "is_noise")]
    return Script(
        {
            "coordinator": [*pick, *[NOTHING_LEFT] * 6],
            "analyst": [NO_CAUSES] * 6,
            "optimizer": [_toy_answer("is_stop", "stopwords"), _toy_answer("is_noise", "noise")],
            "reviewer": [PROCEED] * 6,
        }
    )


def _stamped(stream: Any, lines: list[tuple[float, str]]) -> None:
    for line in stream:
        lines.append((time.perf_counter(), line.rstrip("\n")))


def proposal_times(folder: Path, provider: list[str]) -> list[float]:
    """Coordinator line to "judging on node" line, per candidate, in a real campaign on the
    local back end: one measuring node, so a wave has one proposal, made alone (on two nodes
    a wave's proposals are drafted side by side, and the span would include the other's)."""
    repo = toy_repo(folder / "toy")
    env = dict(os.environ)
    command = [*SPEEDPROOF, "optimize", "-m", str(repo), "--cluster", "local", *provider]
    command += ["--no-stability-check", "--max-candidates", "2", "--out", str(folder / "c")]
    proc = subprocess.Popen(
        command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env
    )
    lines: list[tuple[float, str]] = []
    reader = threading.Thread(target=_stamped, args=(proc.stderr, lines))
    reader.start()
    proc.wait(timeout=900)
    reader.join()
    starts: dict[str, float] = {}
    found: list[float] = []
    for at, line in lines:
        words = line.split()
        if len(words) > 2 and words[0] == "candidate" and words[2] == "coordinator:":
            starts.setdefault(words[1], at)
        elif "judging on node" in line and words[1] in starts:
            found.append(at - starts.pop(words[1]))
    return found


def model_proposals(folder: Path) -> list[float]:
    with ModelServer(models=[MODEL]) as server:
        server.answer_with(toy_script())
        provider = ["--model", f"openai:{MODEL}", "--base-url", server.openai_url]
        return proposal_times(folder, provider)


# ----- S, b: a parent's bundle ---------------------------------------------------------------


@dataclass(frozen=True)
class Bundle:
    name: str
    rev: str
    data: bytes
    make_s: float

    @property
    def kib(self) -> float:
        return len(self.data) / 1024


def bundle_of(name: str, repo: Path) -> Bundle:
    rev = resolve_rev(repo, "HEAD")
    started = time.perf_counter()
    data = bundle_revision(repo, rev)
    return Bundle(name, rev, data, time.perf_counter() - started)


def bundles(folder: Path) -> list[Bundle]:
    found = [bundle_of(n, materialise(get_example(n), folder)) for n in ("logstat", "textstat")]
    found.append(bundle_of("toy", toy_repo(folder / "toy")))
    found.append(bundle_of("this repository (whole history)", HERE.parent))
    return found


def keep_bundle(payload: tuple[bytes | None, str, str, str]) -> int:
    """A job: keep the bundle in the given cache folder (or do nothing without one)."""
    data, rev, digest, cache = payload
    if data is not None:
        store(data, rev, digest, Path(cache) / digest)
    return 0


def _timed_job(cluster: Cluster, payload: Any, placement: Placement) -> float:
    with cluster.batch(keep_bundle) as batch:
        started = time.perf_counter()
        batch.submit(payload, placement)
        done = batch.next_finished()
        assert done.ok, done.error
        return time.perf_counter() - started


def ship_time(cluster: Cluster, node: NodeInfo, bundle: Bundle, cache: str) -> float:
    """Median over `REPEATS` of (a job carrying the bundle - the same job without it)."""
    placement = measuring_on(node)
    digest = digest_of(bundle.data)
    gaps = []
    for _ in range(REPEATS):
        empty = _timed_job(cluster, (None, bundle.rev, digest, cache), placement)
        full = _timed_job(cluster, (bundle.data, bundle.rev, digest, cache), placement)
        gaps.append(full - empty)
    return max(0.0, statistics.median(gaps))


def scheduling(cluster: Cluster, node: NodeInfo, jobs: int = 30) -> float:
    """Median submit-to-result time of a timed job that does nothing."""
    placement = measuring_on(node)
    return statistics.median(
        _timed_job(cluster, (None, "", "", ""), placement) for _ in range(jobs)
    )


# ----- J, l: the judge's own time per candidate ------------------------------------------------


def judged(repo: Path, patch: str, folder: Path) -> tuple[float, float, str]:
    """(judge's wall seconds, driver's landing seconds, verdict) of one candidate."""
    shipper = Shipper(load_manifest(repo / "speedproof.toml"), unsandboxed=False)
    job = shipper.job(patch, JudgeOptions(base="HEAD"))
    started = time.perf_counter()
    result: Judged = judge_on_node(job)
    judge_s = time.perf_counter() - started
    ledger = Ledger.in_folder(folder)
    started = time.perf_counter()
    shipper.land(result, ledger)
    land_s = time.perf_counter() - started
    ledger.close()
    return judge_s, land_s, str(result.verdict)


def judge_terms(folder: Path, examples: bool) -> dict[str, tuple[float, float, str]]:
    toy = toy_repo(folder / "toy")
    found = {"toy": judged(toy, sets_patch(toy), folder / "ledger-toy")}
    if examples:
        for name, patch in (
            ("textstat", "speedup-stopword-set"),
            ("logstat", "speedup-hoist-regexp"),
        ):
            example = get_example(name)
            repo = materialise(example, folder / "examples")
            text = (example.folder / "patches" / f"{patch}.patch").read_text(encoding="utf-8")
            found[name] = judged(repo, text, folder / f"ledger-{name}")
    return found


# ----- the model ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Terms:
    p: float  # proposal time per candidate on the driver
    judge: float  # J
    o: float
    b: float
    land: float

    def wave(self, nodes: int) -> float:
        return nodes * self.p + self.judge + self.o + self.b + nodes * self.land

    def per_hour(self, nodes: int) -> float:
        return 3600 * nodes / self.wave(nodes)

    @property
    def driver_bound_at(self) -> float:
        return self.judge / self.p


def campaign_model(label: str, terms: Terms) -> None:
    print(f"  {label}: p {terms.p:.2f} s, J {terms.judge:.1f} s")
    for nodes in (1, 2, 10, 100):
        print(
            f"    M={nodes:>3}: wave {terms.wave(nodes):7.1f} s, "
            f"{terms.per_hour(nodes):7.0f} candidates/h"
        )
    print(f"    the nodes wait on the driver beyond M* = J/p = {terms.driver_bound_at:.0f} nodes")


def drafted_model(terms: Terms) -> None:
    """The same wave with its proposals drafted side by side (`campaign.drafts`): the
    coordinator's call (one of the four) in turn, the other three in rounds of MAX_DRAFTERS."""
    for nodes in (10, 100):
        rounds = -(-nodes // MAX_DRAFTERS)
        share = terms.p / ROLE_CALLS
        wave = nodes * share + rounds * (terms.p - share) + terms.wave(0)
        print(
            f"    drafted, M={nodes:>3}: wave {wave:7.1f} s, {3600 * nodes / wave:7.0f} "
            "candidates/h (the four calls taken as equal shares of p)"
        )


def function_model(cpu_s: float, o: float, d: float, cores: int) -> None:
    for count in (250, 10_000):
        for nodes in (10, 100):
            workers = -(-count // (nodes * cores))
            wall = max(workers * (cpu_s + o), count * d)
            print(f"    N={count:>6}, M={nodes:>3} x {cores} cores: about {wall:7.0f} s + start-up")
    print(f"    one driver absorbs 1/d = {1 / d:.0f} results/s, C/d = {cpu_s / d:.0f} busy cores")


# ----- the run ---------------------------------------------------------------------------------


def away_from_driver(cluster: Cluster) -> NodeInfo:
    """A measuring node other than the one this driver is attached to: a bundle crosses over."""
    import ray

    here = ray.get_runtime_context().get_node_id()
    return next(node for node in cluster.nodes() if node.slots and node.id != here)


@contextmanager
def connected(address: str) -> Iterator[Cluster]:
    os.environ["RAY_ADDRESS"] = address
    with open_cluster("ray") as cluster:
        yield cluster


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="campaigns per proposer")
    parser.add_argument("--no-examples-judged", action="store_true")
    parser.add_argument("--cores-per-node", type=int, default=8)
    parser.add_argument(
        "--model-latency", type=float, default=5.0, help="seconds a model call takes (assumed)"
    )
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="campaign-scaling-"))
    print("S, b: a parent's bundle (made on the driver; shipped to the other loopback node)")
    made = bundles(folder / "bundles")
    with loopback_cluster(nodes=2, cpus=1) as address, connected(address) as cluster:
        other = away_from_driver(cluster)
        shipped: dict[str, float] = {}
        for bundle in made:
            shipped[bundle.name] = ship_time(cluster, other, bundle, str(folder / "node-cache"))
            print(
                f"  {bundle.name}: {bundle.kib:.0f} KiB, made in {ms(bundle.make_s)}, "
                f"shipped in {ms(shipped[bundle.name])}"
            )
        o = scheduling(cluster, other)
        print(f"o: {ms(o)} a timed job (pinned, slot and CPUs held), submit to result")
        fixed = overhead(cluster, 200)
        print(
            f"d: {fixed.driver_ms:.2f} ms of driver CPU a result ({fixed.latency_ms:.2f} ms alone)"
        )
    offline: list[float] = []
    model: list[float] = []
    for round_ in range(args.repeats):
        offline += proposal_times(folder / f"offline-{round_}", [])
        model += model_proposals(folder / f"model-{round_}")
    print(f"p offline: {statistics.median(offline):.2f} s median of {len(offline)} ({offline})")
    print(f"p model over 127.0.0.1 HTTP: {statistics.median(model):.2f} s median of {len(model)}")
    judges = judge_terms(folder / "judge", not args.no_examples_judged)
    for name, (judge_s, land_s, verdict) in judges.items():
        print(f"J {name}: {judge_s:.1f} s ({verdict}); l: {ms(land_s)} to land its writes")
    cold_wall, cold_cpu, _, _ = job_size(corpus_pairs(1)[0])
    print(f"C: one function-mode verification {cold_cpu:.1f} CPU-s cold ({cold_wall:.1f} s wall)")
    # b: a node's first job on a parent carries the bundle (the examples' size: the toy's).
    ship_s = shipped["toy"]
    print("\nMODEL (from the terms above; not a measurement at 10 or 100 nodes)")
    print("campaign, proposals one after another on the driver:")
    for proposer, p in (
        ("offline", statistics.median(offline)),
        ("model, local", statistics.median(model)),
    ):
        for name, (judge_s, land_s, _) in judges.items():
            campaign_model(f"{proposer} proposer, {name}", Terms(p, judge_s, o, ship_s, land_s))
    latency = args.model_latency
    print(f"campaign, a model proposer whose endpoint answers in {latency:.0f} s a call (assumed):")
    for name, (judge_s, land_s, _) in judges.items():
        p = statistics.median(model) + ROLE_CALLS * latency
        terms = Terms(p, judge_s, o, ship_s, land_s)
        campaign_model(f"model proposer, {name}", terms)
        drafted_model(terms)
    print(f"function mode, {args.cores_per_node} cores a node:")
    function_model(cold_cpu, o, fixed.driver_ms / 1000, args.cores_per_node)


if __name__ == "__main__":
    main()

"""What the execution layer costs and how corpus verification scales, local and on Ray.

    python benchmarks/cluster_scaling.py [--cases 4] [--trivial 400] [--cores-per-node 8]

Starts real Ray clusters on 127.0.0.1 (one node, then two, each of one CPU: `loopback_cluster`)
and prints:

  * job size: the CPU seconds and wall time of one verification of a corpus/v2 case (its
    known-fast source), measured in this process, cold and with the reference's counts already
    measured by the same process (as when one worker judges several answers to one case);
  * overhead per job: a job that does nothing (`abs`), one at a time (latency) and many at
    once (throughput), on the local back end (2 worker processes) and on Ray (2 nodes);
  * corpus verification of N cases (`verify_pairs`, the real path: jobs through the layer,
    verdicts into a verification cache written by the driver) with 1 and 2 workers on each
    back end: wall time, cases a minute, and the driver's own CPU per job;
  * a warm re-run (every verdict from the cache): the driver's time per cached case;
  * the model below, evaluated on those numbers for 100 nodes.

The model. A verification is a job of C CPU-seconds (cold) that runs on one worker; a node of K
cores runs K of them at once. The driver spends d seconds of its own CPU on each result (read
it, check the verifier digest, append a JSON line and a cache line with fsync) and h is the
share of verdicts already in the cache (each costing the driver c seconds and no worker time).
For N verifications on M nodes:

    wall ≈ max( ceil(N (1 - h) / (M K)) · C_wall ,  N (1 - h) · d + N h · c ) + start-up

where C_wall is a job's wall time on a loaded node (≈ C, since a job keeps one core busy). The
first term is the workers, the second the driver, which is one process: it caps the cluster at
1 / d results a second, that is at C / d busy cores before the driver, not the nodes, is the
bottleneck. The per-job overhead of the layer (o, from the trivial jobs) adds o / C to every
job's cost. Numbers this rests on are printed by the run; nothing else is assumed but M and K.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from speedproof.cluster import Cluster, LocalCluster, open_cluster, run_all
from speedproof.cluster.loopback import loopback_cluster
from speedproof.corpus.cache import VerificationCache
from speedproof.corpus.generate import GenerationConfig, TrustedPair, build_pairs, verify_pairs
from speedproof.corpus.literals import DEFAULT_CORPUS
from speedproof.corpus.splits import load_split
from speedproof.functions.verifier import verify_candidate


@dataclass(frozen=True)
class Run:
    label: str
    cases: int
    wall_s: float
    driver_cpu_s: float
    load: float  # the one-minute load average when the run ended (2 cores)

    @property
    def per_minute(self) -> float:
        return 60 * self.cases / self.wall_s

    @property
    def driver_ms_per_job(self) -> float:
        return 1000 * self.driver_cpu_s / self.cases


class CpuMeter:
    """CPU seconds of every descendant of this process, sampled from /proc every 20 ms.

    `getrusage(RUSAGE_CHILDREN)` sees none of the sandbox's work: bubblewrap's outer process
    exits without reaping the namespace's init, so the counts never reach this process. The
    samples miss at most the last 20 ms of each process (a verification runs ten processes of
    seconds each: under 1 %).
    """

    def __init__(self) -> None:
        self._seen: dict[tuple[int, str], float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._tick = os.sysconf("SC_CLK_TCK")

    def _children(self, pid: int) -> list[int]:
        found: list[int] = []
        for task in Path(f"/proc/{pid}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                found += [int(child) for child in task.read_text().split()]
        return found

    def _sample(self) -> None:
        pending = self._children(os.getpid())
        while pending:
            pid = pending.pop()
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                # utime and stime are fields 14 and 15 of stat; index 11 and 12 after the name.
                cpu = (int(fields[11]) + int(fields[12])) / self._tick
                self._seen[(pid, fields[19])] = cpu  # keyed with the start time: pids recycle
            pending += self._children(pid)

    def _poll(self) -> None:
        while not self._stop.wait(0.02):
            self._sample()

    def __enter__(self) -> CpuMeter:
        self._sample()
        self._before = dict(self._seen)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    @property
    def seconds(self) -> float:
        return sum(cpu - self._before.get(key, 0.0) for key, cpu in self._seen.items())


def corpus_pairs(count: int) -> list[TrustedPair]:
    """`count` dev cases of corpus/v2, one family after another, with their known-fast sources
    (v2 was generated from seed 7 with no draft redrawn, so the default pairs are its cases)."""
    by_id = {pair.case.id: pair for pair in build_pairs(GenerationConfig())}
    cases = load_split(DEFAULT_CORPUS, "dev")
    families: dict[str, list[TrustedPair]] = {}
    for case in cases:
        families.setdefault(case.family, []).append(by_id[case.id])
    ordered = [pair for group in zip(*families.values(), strict=False) for pair in group]
    return ordered[:count]


def job_size(pair: TrustedPair) -> tuple[float, float, float, float]:
    """(cold wall, cold CPU, warm wall, warm CPU) of one verification run in this process."""
    figures = []
    for _ in range(2):
        wall = time.perf_counter()
        with CpuMeter() as meter:
            result = verify_candidate(pair.case, pair.fast_source, seed=1)
        assert result.status == "passed", result.detail
        figures += [time.perf_counter() - wall, meter.seconds]
    return figures[0], figures[1], figures[2], figures[3]


@dataclass(frozen=True)
class Overhead:
    latency_ms: float  # one job at a time, submit to result
    wall_ms: float  # per job, many in flight
    driver_ms: float  # the driver's own CPU per job, many in flight
    idle_driver: float  # the driver's CPU share while no job runs (seconds a second)
    idle_cluster: float  # the back end's other processes' CPU while no job runs


def overhead(cluster: Cluster, jobs: int) -> Overhead:
    """What the layer itself costs, measured with jobs that do nothing (`abs`)."""
    list(run_all(cluster, abs, range(-8, 0)))  # start the workers first
    started = time.perf_counter()
    for _ in run_all(cluster, abs, range(-50, 0), window=1):
        pass
    latency = (time.perf_counter() - started) / 50
    cpu, started = time.process_time(), time.perf_counter()
    for _ in run_all(cluster, abs, range(-jobs, 0)):
        pass
    wall, driver = time.perf_counter() - started, time.process_time() - cpu
    cpu = time.process_time()
    time.sleep(5)
    idle = (time.process_time() - cpu) / 5
    with CpuMeter() as meter:  # apart: the meter's own polling runs in this process
        time.sleep(5)
    return Overhead(
        1000 * latency, 1000 * wall / jobs, 1000 * driver / jobs, idle, meter.seconds / 5
    )


def verify_on(cluster: Cluster, pairs: list[TrustedPair], label: str, folder: Path) -> Run:
    config = GenerationConfig(workers=cluster.slots)
    cache = VerificationCache(folder / f"{label.replace(' ', '-')}.jsonl")
    cpu, wall = time.process_time(), time.perf_counter()
    _, stats = verify_pairs(pairs, config, cache, cluster=cluster)
    assert stats.verified == len(pairs)
    elapsed, driver = time.perf_counter() - wall, time.process_time() - cpu
    return Run(label, len(pairs), elapsed, driver, os.getloadavg()[0])


def warm_rerun(pairs: list[TrustedPair], folder: Path) -> float:
    """Seconds per case of a re-run served wholly from the first run's cache."""
    cache = VerificationCache(next(folder.glob("*.jsonl")))
    started = time.perf_counter()
    _, stats = verify_pairs(pairs, GenerationConfig(), cache)
    assert stats.cached == len(pairs)
    return (time.perf_counter() - started) / len(pairs)


@contextmanager
def on_ray(nodes: int) -> Iterator[Cluster]:
    with loopback_cluster(nodes=nodes, cpus=1) as address:
        os.environ["RAY_ADDRESS"] = address
        with open_cluster("ray") as cluster:
            yield cluster


def project(
    local: Run,
    costs: dict[str, Overhead],
    size: tuple[float, float, float, float],
    cached_s: float,
    cores: int,
) -> list[str]:
    """The docstring's model on the measured numbers, for 100 nodes of `cores` cores."""
    cold_wall, cold_cpu, _, warm_cpu = size
    # d: what the driver does per result (the local run's driver CPU per job, which holds the
    # recording and the local pool's share), plus what Ray adds per job over the local pool.
    ray_extra = max(0.0, costs["ray"].driver_ms - costs["local"].driver_ms) / 1000
    driver = local.driver_cpu_s / local.cases + ray_extra
    lines = [
        f"  C = {cold_cpu:.1f} CPU-s a job cold, {warm_cpu:.1f} with the reference cached "
        f"(wall {cold_wall:.1f} s alone on this machine)",
        f"  o = {costs['ray'].wall_ms:.2f} ms of layer per job on Ray = "
        f"{100 * costs['ray'].wall_ms / 1000 / cold_cpu:.3f} % of C",
        f"  d = {1000 * driver:.1f} ms driver CPU a result on Ray, c = {1000 * cached_s:.2f} ms "
        "a cached case",
        f"  one driver's ceiling: 1/d = {1 / driver:.0f} results/s, enough for "
        f"{cold_cpu / driver:.0f} busy cores",
    ]
    nodes = 100
    for label, count in (("corpus of 250 cases", 250), ("10,000 rewards", 10_000)):
        for hit in (0.0, 0.5, 0.9):
            work = count * (1 - hit)
            waves = math.ceil(work / (nodes * cores))
            workers = waves * cold_cpu
            driver_s = work * driver + count * hit * cached_s
            lines.append(
                f"  {label}, h = {hit:.0%}: {waves} wave(s) of {cold_cpu:.0f} s on {nodes} x "
                f"{cores} cores, driver {driver_s:.1f} s -> ≈ {max(workers, driver_s):.0f} s "
                "plus start-up"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=4, help="Corpus cases verified per run.")
    parser.add_argument("--trivial", type=int, default=400, help="Trivial jobs for overhead.")
    parser.add_argument("--cores-per-node", type=int, default=8, help="K of the model.")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    pairs = corpus_pairs(args.cases)
    size = job_size(pairs[0])
    print(
        f"job size ({pairs[0].case.family}): cold {size[0]:.1f} s wall, {size[1]:.1f} CPU-s; "
        f"reference cached {size[2]:.1f} s wall, {size[3]:.1f} CPU-s"
    )
    runs: dict[str, Run] = {}
    costs: dict[str, Overhead] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        steps: list[tuple[str, Callable[[], Cluster]]] = [
            ("local 1 worker", lambda: LocalCluster(1)),
            ("local 2 workers", lambda: LocalCluster(2)),
        ]
        for label, make in steps:
            with make() as cluster:
                if cluster.slots == 2:
                    costs["local"] = overhead(cluster, args.trivial)
                runs[label] = verify_on(cluster, pairs, label, folder)
        for nodes in (1, 2):
            label = f"ray {nodes} node{'s' if nodes > 1 else ''} x 1 CPU"
            with on_ray(nodes) as cluster:
                if nodes == 2:
                    costs["ray"] = overhead(cluster, args.trivial)
                runs[label] = verify_on(cluster, pairs, label, folder)
        cached_s = warm_rerun(pairs, folder)
    print(
        "overhead per job that does nothing: latency one at a time / wall and driver CPU per "
        "job many at once / idle CPU of the driver and of the rest of the back end"
    )
    for name, cost in costs.items():
        print(
            f"  {name:6s} {cost.latency_ms:6.2f} ms / {cost.wall_ms:5.2f} ms, "
            f"{cost.driver_ms:5.2f} ms / {100 * cost.idle_driver:4.1f} % and "
            f"{100 * cost.idle_cluster:5.1f} % of a core"
        )
    print(f"corpus verification of {args.cases} cases:")
    for run in runs.values():
        print(
            f"  {run.label:24s} {run.wall_s:6.1f} s  {run.per_minute:5.1f} cases/min  "
            f"driver {run.driver_ms_per_job:6.1f} ms CPU a job  (load {run.load:.1f})"
        )
    print(f"warm re-run from the cache: {1000 * cached_s:.2f} ms a case")
    print(f"model for 100 nodes x {args.cores_per_node} cores (see the docstring):")
    for line in project(runs["local 2 workers"], costs, size, cached_s, args.cores_per_node):
        print(line)


if __name__ == "__main__":
    main()

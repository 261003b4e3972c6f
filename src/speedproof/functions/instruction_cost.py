"""Cachegrind instruction counts of a function, whole-process and function-only.

Each measurement is the harness run under `setarch -R valgrind --tool=cachegrind --cache-sim=no`
inside the sandbox, with PYTHONHASHSEED=0; the count is the `summary:` line of the Cachegrind
output, which reaches this process through a pipe (`--cachegrind-out-file=/proc/self/fd/N`), so
nothing in the sandbox is writable but its tmpfs /tmp.

Charged counts (ADR 0010, 0065): a second run, the calibration, does everything the measured run
does — interpreter start, job parsing, copying every input, checking and serialising the same
output and arguments — except the call, reporting the reference's outputs instead; and it
compiles and defines a stub (`def solve(): pass`) in place of the measured source. Whole minus
calibration is the cost of the calls plus everything the source itself adds: compiling it,
folding its constants, building its literals. Had the calibration compiled the measured source,
that work would cancel out, and a 4,001-entry table of precomputed answers compiled for free
(function-only reward +4.36 while the whole process was 1.5x slower than the reference's). The
stub is the same for every source of a case, so the reference's and the candidate's calibrations
are one job, run once. Every count is taken `runs` times and must repeat exactly.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from speedproof.functions.case import Json
from speedproof.functions.jobs import HarnessRun, Mode, job_document, run_harness
from speedproof.functions.sandbox import Limits, SandboxConfig
from speedproof.judge.measure.cachegrind import MeasurementError as MeasurementError
from speedproof.judge.measure.cachegrind import cachegrind_wrapper as cachegrind_wrapper
from speedproof.judge.measure.cachegrind import parse_total_ir as parse_total_ir


@dataclass(frozen=True)
class MeasureSpec:
    """What to measure: a function on the benchmark inputs, with the reference's results."""

    source: str
    function_name: str
    inputs: list[list[Json]]
    expected: list[list[Json]]

    def job(self, mode: Mode) -> bytes:
        source = self.source if mode == "call" else calibration_stub(self.function_name)
        return job_document(
            source, self.function_name, self.inputs, mode=mode, expected=self.expected
        )


def calibration_stub(function_name: str) -> str:
    """The source a calibration run compiles: the name the harness looks up, nothing else."""
    return f"def {function_name}():\n    pass\n"


@dataclass(frozen=True)
class IrRun:
    """One Cachegrind run: the harness's classified result and the count when it completed."""

    run: HarnessRun
    ir: int | None


@dataclass(frozen=True)
class Measurement:
    """`runs` measured and `runs` calibration counts of one function."""

    measured: tuple[IrRun, ...]
    calibration: tuple[IrRun, ...]

    @property
    def failed(self) -> IrRun | None:
        """The first run that did not complete with a count, if any."""
        for item in (*self.measured, *self.calibration):
            if item.ir is None or item.run.status != "ok":
                return item
        return None

    @property
    def stable(self) -> bool:
        """Every measured count equal, and every calibration count equal."""
        whole = {item.ir for item in self.measured}
        fixed = {item.ir for item in self.calibration}
        return len(whole) == 1 and len(fixed) == 1 and None not in whole | fixed

    @property
    def whole_ir(self) -> int:
        """Whole-process count of the measured run."""
        return _count(self.measured[0])

    @property
    def calibration_ir(self) -> int:
        """Whole-process count of the calibration run: everything but the calls."""
        return _count(self.calibration[0])

    @property
    def function_ir(self) -> int:
        """Instructions spent in the calls: measured minus calibration."""
        return self.whole_ir - self.calibration_ir


def _count(item: IrRun) -> int:
    if item.ir is None:
        raise MeasurementError("no instruction count for this run")
    return item.ir


def measure_once(job: bytes, limits: Limits, config: SandboxConfig) -> IrRun:
    """One Cachegrind run of the harness on a job document in the sandbox."""
    run = run_harness(
        job, limits=limits.for_valgrind(), config=config, wrapper=cachegrind_wrapper()
    )
    if run.status != "ok":
        return IrRun(run, None)
    return IrRun(run, parse_total_ir(run.outcome.side.decode("utf-8", "replace")))


_CACHE: dict[str, Measurement] = {}
_CACHE_LOCK = threading.Lock()


# Calibration runs of cached measurements, by job: a candidate's calibration is the same job as
# its case's reference's, so once the reference is cached a candidate needs its measured runs only.
_CALIBRATIONS: dict[str, tuple[IrRun, ...]] = {}


def _job_key(job: bytes, runs: int, limits: Limits, config: SandboxConfig) -> str:
    digest = hashlib.sha256(job)
    digest.update(repr((runs, limits, config)).encode())
    return digest.hexdigest()


def _cache_key(spec: MeasureSpec, runs: int, limits: Limits, config: SandboxConfig) -> str:
    return _job_key(spec.job("call"), runs, limits, config)


def _done(runs: tuple[IrRun, ...]) -> list[Future[IrRun]]:
    futures: list[Future[IrRun]] = []
    for run in runs:
        future: Future[IrRun] = Future()
        future.set_result(run)
        futures.append(future)
    return futures


def measure_many(
    specs: Sequence[MeasureSpec],
    *,
    runs: int = 2,
    limits: Limits | None = None,
    config: SandboxConfig | None = None,
    cache: Sequence[bool] | None = None,
    workers: int | None = None,
) -> list[Measurement]:
    """Measure every spec `runs` times in both modes, all runs in parallel.

    `cache[i]` true keeps spec i's measurement for this process (the verifier caches the
    reference, whose counts depend only on the case, the benchmark inputs of one seed and the
    verifier). Raises SandboxUnavailable or MeasurementError for infrastructure failures.
    """
    limits = limits or Limits()
    config = config or SandboxConfig()
    flags = list(cache) if cache is not None else [False] * len(specs)
    keys = [_cache_key(spec, runs, limits, config) for spec in specs]
    pending: dict[int, tuple[list[Future[IrRun]], list[Future[IrRun]]]] = {}
    results: dict[int, Measurement] = {}
    # Identical job documents (the calibrations of one case's sources) are run once.
    submitted: dict[bytes, list[Future[IrRun]]] = {}
    with ThreadPoolExecutor(max_workers=workers or max(1, os.cpu_count() or 1)) as pool:

        def runs_of(job: bytes) -> list[Future[IrRun]]:
            if job not in submitted:
                with _CACHE_LOCK:
                    done = _CALIBRATIONS.get(_job_key(job, runs, limits, config))
                submitted[job] = (
                    _done(done)
                    if done is not None
                    else [pool.submit(measure_once, job, limits, config) for _ in range(runs)]
                )
            return submitted[job]

        for index, spec in enumerate(specs):
            with _CACHE_LOCK:
                cached = _CACHE.get(keys[index]) if flags[index] else None
            if cached is not None:
                results[index] = cached
                continue
            pending[index] = (runs_of(spec.job("call")), runs_of(spec.job("skip")))
        for index, (calls, skips) in pending.items():
            measurement = Measurement(
                tuple(f.result() for f in calls), tuple(f.result() for f in skips)
            )
            results[index] = measurement
            if flags[index] and measurement.failed is None and measurement.stable:
                skip = _job_key(specs[index].job("skip"), runs, limits, config)
                with _CACHE_LOCK:
                    _CACHE[keys[index]] = measurement
                    _CALIBRATIONS[skip] = measurement.calibration
    return [results[index] for index in range(len(specs))]

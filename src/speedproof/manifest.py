"""The target's manifest, `speedproof.toml`: its schema and the checks across its sections.

Reading a file into it, with errors that name key and line, is `manifest_loading`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from speedproof.bench import schema as bench_schema
from speedproof.bench.schema import BENCH_KINDS, WorkloadKind
from speedproof.judge.inputs.variant_settings import Kind, TwinKind, VariantSettings
from speedproof.judge.policy.evidence import PolicyRules

MANIFEST_NAME = "speedproof.toml"
Language = Literal["go", "python", "command"]
Runner = Literal["go", "pytest", "unittest", "command"]
# Runners that run the tests with the target's Python interpreter, whatever the target's language.
PYTHON_RUNNERS: tuple[Runner, ...] = ("pytest", "unittest")
TierName = Literal["representative", "plausible", "stress", "holdout"]
MetricName = Literal["wall", "cpu", "memory", "binary_size", "instructions"]
BUILT_IN_METRICS: tuple[str, ...] = ("wall", "cpu", "memory", "binary_size", "instructions")
Direction = Literal["lower", "higher"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Target(_Strict):
    """What the program is and how to build and start it."""

    name: str = Field(min_length=1)
    language: Language
    # Fixed arguments placed before every workload's own (a subcommand, for instance).
    prefix: list[str] = []
    # go: the package `go build` turns into the binary.
    package: str = "."
    # python: the module run with `-m`, or the script path; source roots go on PYTHONPATH.
    module: str | None = None
    script: str | None = None
    source_roots: list[str] = ["."]
    # An absolute path, a path relative to the manifest's folder (anchored when the manifest is
    # loaded, so a `.venv/bin/python` beside it is found wherever the judge runs from), or a
    # name looked up on PATH.
    interpreter: str | None = None
    # command: how to build, and the program to run (relative to the target folder or on PATH).
    build: list[str] = []
    program: str | None = None
    # `interpreter` as the manifest spells it, kept for messages once a relative one is anchored.
    _interpreter_written: str | None = PrivateAttr(default=None)

    @property
    def interpreter_written(self) -> str | None:
        return self._interpreter_written or self.interpreter

    @model_validator(mode="after")
    def _language_fields(self) -> Target:
        # Neither is allowed here for a library measured by its benchmarks alone; the manifest
        # asks for one as soon as a workload runs the program (`Manifest._entry_needed`).
        if self.language == "python" and self.module is not None and self.script is not None:
            raise ValueError(_ONE_ENTRY)
        if self.language == "command" and not self.program:
            raise ValueError("a command target needs `program`")
        return self


_ONE_ENTRY = "a python target needs exactly one of `module` or `script`"


class KeyedError(ValueError):
    """A problem a model-level check finds in one key: the error names that key and its line
    (`_describe` appends `loc` to where pydantic says the check ran)."""

    def __init__(self, loc: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.loc = loc


class Tests(_Strict):
    """`[tests]`: how the target's own tests run.

    `allow_failing_baseline = true` accepts a baseline with collection errors or with more than
    20 % of its collected tests failing; by default such a baseline is an infrastructure error,
    since a candidate's breaks among those failures are invisible to the gate.
    """

    runner: Runner
    # go: packages (default ./...); pytest: paths and options; unittest: what `python -m unittest`
    # takes (`discover -s tests -p "test_*.py" -t .`, or test names; none discovers from the
    # target folder); command: the whole command. All of them reach the runner untouched.
    args: list[str] = []
    timeout_s: float = Field(default=600.0, gt=0)
    # A baseline pass that fails on the candidate is re-run this many times before it counts.
    flaky_retries: int = Field(default=2, ge=0, le=10)
    # A baseline whose tests fail to collect, or fail by more than a fifth of those collected
    # (judge/tests/gate.py BASELINE_FAILING_SHARE), is refused: a candidate's breaks among its
    # failures would never be seen. True judges anyway, with a warning in the test gate's detail.
    allow_failing_baseline: bool = False

    @field_validator("args")
    @classmethod
    def _unittest_args(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if info.data.get("runner") == "unittest":
            check_unittest_args(value)
        return value


# `python -m unittest discover`'s options that take a value, by every spelling it accepts.
_DISCOVER_OPTIONS = ("-s", "--start-directory", "-p", "--pattern", "-t", "--top-level-directory")
# Options of both forms that take a value (`--durations` is Python 3.12's).
_VALUE_OPTIONS = (*_DISCOVER_OPTIONS, "-k", "--durations")


def check_unittest_args(args: Sequence[str]) -> None:
    """What `python -m unittest` would refuse or misread in these arguments, on any Python since
    3.7; ValueError says which argument and what to write instead. Whatever else the
    interpreter's own parser refuses, `speedproof manifest validate` asks it."""
    discovering = bool(args) and args[0].lower() == "discover"
    for index, arg in enumerate(args):
        if index > 0 and args[index - 1] in _VALUE_OPTIONS:
            continue  # an option's value, whatever it says
        if arg.lower() == "discover" and index > 0:
            raise ValueError(
                '"discover" must be the first argument: `python -m unittest` reads it nowhere '
                "else, and would import a test module named discover"
            )
        if arg in _VALUE_OPTIONS and index == len(args) - 1:
            raise ValueError(f"{arg!r} needs a value after it")
        if arg.split("=", 1)[0] in _DISCOVER_OPTIONS and not discovering:
            raise ValueError(
                f'{arg!r} is an option of discovery: begin args with "discover" '
                f"(args = {json.dumps(['discover', *args])})"
            )


# Placeholders a workload may use (docs/adr/0030): the folder a generator writes, the secret seed
# it is given, and the folder of holdout inputs outside the repository.
OUT_TOKEN = "{out}"
SEED_TOKEN = "{seed}"
HOLDOUT_TOKEN = "{holdout}"


class Workload(_Strict):
    id: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    tier: TierName = "representative"
    args: list[str] = []
    stdin: str | None = None
    files: list[str] = []
    expected_exit: int = 0
    timeout_s: float = Field(default=60.0, gt=0)
    # A command that writes this workload's inputs into `{out}` from a secret `{seed}` drawn
    # per judgement; run once, sandboxed, in the baseline's target folder.
    generate: list[str] = []
    # The win on this workload belongs to inputs like its own: carry-over holds it against this
    # workload's twin alone, not against the other unseen workloads.
    input_specific: bool = False
    # How its twin's inputs are made, and their kind (`inputs/variant_settings.py`).
    twin: TwinKind = "mutated"
    mutator: Kind | None = None
    # A benchmark of the target's own as the measured unit (`speedproof.bench`): its kind, its
    # name, and for go-bench the package that holds it and Go's -benchtime. `args` of a Python
    # benchmark reach pytest or the pyperf script after speedproof's own options.
    kind: WorkloadKind = "command"
    bench: str | None = None
    package: str | None = None
    benchtime: str | None = None

    @field_validator("bench")
    @classmethod
    def _bench_named(cls, value: str, info: ValidationInfo) -> str:
        return bench_schema.check_bench(info.data.get("kind", "command"), value)

    @field_validator("package")
    @classmethod
    def _bench_package(cls, value: str, info: ValidationInfo) -> str:
        return bench_schema.check_package(info.data.get("kind", "command"), value)

    @field_validator("benchtime")
    @classmethod
    def _bench_time(cls, value: str, info: ValidationInfo) -> str:
        return bench_schema.check_benchtime(info.data.get("kind", "command"), value)

    @model_validator(mode="after")
    def _bench_sound(self) -> Workload:
        if not self.is_bench:
            return self
        if self.bench is None:
            raise KeyedError(("kind",), f"a {self.kind} workload needs `bench`: what it runs")
        for key, value in (
            ("stdin", self.stdin),
            ("files", self.files),
            ("generate", self.generate),
        ):
            if value:
                raise KeyedError(
                    (key,), f"a benchmark workload reads no inputs of its own: drop `{key}`"
                )
        if self.kind == "go-bench" and self.args:
            raise KeyedError(
                ("args",), "a go-bench workload takes no `args`: speedproof sets every -test flag"
            )
        return self

    @property
    def is_bench(self) -> bool:
        """Whether a run of this workload is one of the target's own benchmarks."""
        return self.kind in BENCH_KINDS

    @field_validator("generate")
    @classmethod
    def _names_its_folder(cls, value: list[str]) -> list[str]:
        if value and not any(OUT_TOKEN in part for part in value):
            raise ValueError(f"a generator must name the folder it writes as {OUT_TOKEN}")
        return value

    @model_validator(mode="after")
    def _placeholders_sound(self) -> Workload:
        uses = [*self.args, *([self.stdin] if self.stdin else [])]
        if not self.generate and any(OUT_TOKEN in part for part in uses):
            raise ValueError(f"{OUT_TOKEN} names generated inputs: the workload needs `generate`")
        if self.tier != "holdout" and any(HOLDOUT_TOKEN in part for part in uses):
            raise ValueError(f"only a holdout workload may read {HOLDOUT_TOKEN} inputs")
        return self

    @property
    def placeholders(self) -> bool:
        """Whether the workload names inputs that exist only once a judgement prepares them."""
        uses = [*self.args, *([self.stdin] if self.stdin else [])]
        return bool(self.generate) or any(HOLDOUT_TOKEN in part for part in uses)


class Normalise(_Strict):
    stream: Literal["stdout", "stderr", "both"] = "both"
    pattern: str
    replace: str = ""

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from exc
        return value


class Behaviour(_Strict):
    # A benchmark that prints its metrics (the reported lane) sets compare_stdout = false: its
    # stdout is measurement, not behaviour.
    compare_stdout: bool = True
    compare_stderr: bool = True
    # Files a workload writes, relative to the target folder; compared by digest like stdout.
    output_files: list[str] = []
    normalise: list[Normalise] = []


class Holdout(_Strict):
    # A folder of holdout inputs, absolute or relative to the manifest, and best outside the
    # repository: a candidate's code cannot read it except in a holdout run, at a fresh path.
    dir: str | None = None


class Protect(_Strict):
    paths: list[str] = []


class Sandbox(_Strict):
    network: bool = False
    env_allow: list[str] = ["LANG", "LC_ALL", "TZ", "TERM"]


# The schedule's defaults (docs/adr/0042): a 5 % win needs 80-140 pairs at this kind of
# machine's noise (winsorized sd 8.5-11 % per pair, docs/adr/0029); on a 40 ms workload a pair
# costs about 0.09 s of timed runs, so 20 s fits about 200 pairs.
MAX_PAIRS_DEFAULT = 200
MAX_MEASURE_S_DEFAULT = 20.0
# Two minutes of timed runs a judgement: a 1 s workload at sqlparse's noise (7.6 % a pair) gets
# the ~60 pairs a 5 % win needs instead of 10; a 40 ms workload never needs it (200 pairs fit
# its 20 s).
MAX_TOTAL_MEASURE_S_DEFAULT = 120.0


class Policy(_Strict):
    # A built-in metric, or the primary metric of the [reported] block.
    primary_metric: str = "wall"
    accept_floor_pct: float = Field(default=3.0, gt=0)
    guardrail_limit_pct: float = Field(default=2.0, gt=0)
    guardrails: list[str] = ["cpu", "memory"]
    statistical_support_required: bool = True
    # The sequential schedule (docs/adr/0020, 0042): measure `round_pairs` pairs a round and
    # stop as soon as the verdict is certain; `alpha` is spent across the looks up to the pairs
    # that fit `max_measure_s` seconds of timed runs per workload (both sides), at most
    # `max_pairs`. `max_measure_s = 0`: no budget, `max_pairs` is the last look.
    round_pairs: int = Field(default=10, ge=4, le=1000)
    max_pairs: int = Field(default=MAX_PAIRS_DEFAULT, ge=4, le=10000)
    max_measure_s: float = Field(default=MAX_MEASURE_S_DEFAULT, ge=0)
    # After the first round the budget of each workload grows to what a win at the floor needs
    # at the noise measured, every representative workload together at most this many seconds
    # (docs/adr/0078); 0 keeps `max_measure_s` as the whole budget.
    max_total_measure_s: float = Field(default=MAX_TOTAL_MEASURE_S_DEFAULT, ge=0)
    alpha: float = Field(default=0.05, gt=0, lt=0.5)
    # A fixed schedule instead: exactly this many pairs, one look.
    pairs: int | None = Field(default=None, ge=4, le=10000)
    timeout_multiple: float = Field(default=2.0, ge=1.0)
    timeout_floor_s: float = Field(default=30.0, gt=0)
    # How many CPUs the timed runs are pinned to, or "all" (the default) for none
    # (speedproof.judge.measure.pinning, docs/adr/0027). Pinned to one, a run varies a third as much
    # on a 2-vCPU machine, but a Go program then runs with one P and its collector on the same core:
    # opt in where the program's speed is single-core speed.
    timed_cpus: int | Literal["all"] = "all"
    # An accept stands only if every unseen reading improves by at least a share of the win it is
    # held against (docs/adr/0030): each holdout by `carry_over_fraction` (other inputs may
    # legitimately gain less: textstat's tickets holdout keeps about a third of the stopword
    # win; of the smallest representative win once the twin of new content is read, 0085), a
    # workload's own twin by `twin_carry_over_fraction` (the same shape with new content:
    # real wins kept 79-107 % there, while a table answering 17 % of a twin was accepted once in
    # 4 under a quarter's bar; docs/adr/0076). 0 for `carry_over_fraction` turns the rule off.
    carry_over_fraction: float = Field(default=0.25, ge=0, le=1)
    twin_carry_over_fraction: float = Field(default=0.5, ge=0, le=1)

    @field_validator("timed_cpus", mode="before")
    @classmethod
    def _cpu_count_or_all(cls, value: object) -> object:
        if value == "all" or (type(value) is int and value >= 1):
            return value
        raise ValueError(f'must be a number of CPUs (1 or more) or "all", got {value!r}')

    @model_validator(mode="after")
    def _schedule_sound(self) -> Policy:
        if self.max_pairs < self.round_pairs:
            raise ValueError(
                f"max_pairs ({self.max_pairs}) must be at least round_pairs ({self.round_pairs})"
            )
        return self

    def rules(self, reported: Reported | None = None) -> PolicyRules:
        if reported is None:
            return PolicyRules(
                primary_metric=self.primary_metric,
                accept_floor_pct=self.accept_floor_pct,
                guardrail_limit_pct=self.guardrail_limit_pct,
                guardrails=tuple(self.guardrails),
                statistical_support_required=self.statistical_support_required,
                carry_over_fraction=self.carry_over_fraction,
                twin_carry_over_fraction=self.twin_carry_over_fraction,
            )
        return PolicyRules(
            primary_metric=reported.primary,
            accept_floor_pct=reported.min_delta_pct,
            guardrail_limit_pct=self.guardrail_limit_pct,
            guardrails=(*self.guardrails, *(p.name for p in reported.protected)),
            statistical_support_required=self.statistical_support_required,
            limits=tuple((p.name, p.tolerance_pct) for p in reported.protected),
            carry_over_fraction=self.carry_over_fraction,
            twin_carry_over_fraction=self.twin_carry_over_fraction,
        )


class Instructions(_Strict):
    """The instruction-count lane: Cachegrind `Ir` of every representative workload.

    Unset, the lane is on for Python and command targets and off for Go: the Go runtime's map
    seeds and its monitor thread make two runs of one binary differ by about 0.15 % whatever
    the settings (docs/adr/0021), so on Go the lane would only ever report itself unstable.
    `enabled = true` turns it on for Go anyway.
    """

    enabled: bool | None = None
    # Runs a side; the counts must agree exactly or the lane reports itself unstable.
    repeats: int = Field(default=2, ge=2, le=10)
    timeout_s: float = Field(default=600.0, gt=0)


class Advisor(_Strict):
    """Gates of the advisor's yes/no questions (docs/adr/0024): a cause is flagged when the
    model's probability is at least `cause_p` AND at least `cause_sd` standard deviations above
    its usual answer to that question over the reference set; hazards use the stricter pair."""

    # The exact model id the advisor must be answered by (provider:name), or none: offline.
    model: str | None = None
    base_url: str | None = None
    # The model's baseline over the reference set (`speedproof advisor baseline`), relative to
    # the manifest; required with a model, since a baseline belongs to one exact model id.
    baseline: str | None = None
    cause_sd: float = Field(default=0.5, ge=0)
    cause_p: float = Field(default=0.5, ge=0, le=1)
    hazard_sd: float = Field(default=2.0, ge=0)
    hazard_p: float = Field(default=0.5, ge=0, le=1)
    # Hot functions asked about, at most.
    max_functions: int = Field(default=12, ge=1, le=100)


class ProtectedMetric(_Strict):
    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
    direction: Direction
    # How much worse than the baseline this metric may read before the candidate is rejected.
    tolerance_pct: float = Field(gt=0)


class Reported(_Strict):
    """The reported-metric lane: every workload run prints a JSON object of metrics."""

    primary: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
    direction: Direction
    min_delta_pct: float = Field(default=3.0, gt=0)
    # Pairs measured (one look: a benchmark that prints metrics is usually slow).
    repeats: int = Field(default=10, ge=4, le=1000)
    protected: list[ProtectedMetric] = []

    def directions(self) -> dict[str, Direction]:
        return {self.primary: self.direction, **{p.name: p.direction for p in self.protected}}


class Manifest(_Strict):
    target: Target
    tests: Tests
    workloads: list[Workload] = Field(min_length=1)
    behaviour: Behaviour = Behaviour()
    protect: Protect = Protect()
    sandbox: Sandbox = Sandbox()
    policy: Policy = Policy()
    instructions: Instructions = Instructions()
    reported: Reported | None = None
    advisor: Advisor = Advisor()
    holdout: Holdout = Holdout()
    variants: VariantSettings = VariantSettings()

    @model_validator(mode="before")
    @classmethod
    def _bench_kinds(cls, data: object) -> object:
        """A workload that names a `bench` and no `kind` gets its language's benchmark kind."""
        return bench_kinds_filled(data)

    @model_validator(mode="after")
    def _benchmarks_sound(self) -> Manifest:
        check_benchmarks(self)
        return self

    @model_validator(mode="after")
    def _entry_needed(self) -> Manifest:
        target = self.target
        runs_program = any(not w.is_bench for w in self.workloads)
        if target.language == "python" and runs_program and not (target.module or target.script):
            raise KeyedError(("target",), f"{_ONE_ENTRY} (or only benchmark workloads)")
        return self

    @model_validator(mode="after")
    def _workloads_sound(self) -> Manifest:
        ids = [w.id for w in self.workloads]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"workload ids must be unique; repeated: {', '.join(duplicates)}")
        if not any(w.tier == "representative" for w in self.workloads):
            raise ValueError("at least one workload must have tier = 'representative'")
        return self

    @model_validator(mode="after")
    def _metrics_known(self) -> Manifest:
        known = set(BUILT_IN_METRICS)
        if self.reported is not None:
            known |= set(self.reported.directions())
            if self.behaviour.compare_stdout:
                raise ValueError(
                    "a [reported] target prints its metrics on stdout: set "
                    "behaviour.compare_stdout = false"
                )
        named = [self.policy.primary_metric, *self.policy.guardrails]
        unknown = sorted({m for m in named if m not in known})
        if unknown:
            raise ValueError(f"unknown metric(s) in [policy]: {', '.join(unknown)}")
        if self.policy.primary_metric == "instructions" and self.instructions.enabled is False:
            raise ValueError("primary_metric = 'instructions' needs [instructions] enabled = true")
        return self

    def rules(self) -> PolicyRules:
        """The policy's rules, with the [reported] block's metrics when there is one."""
        specific = tuple(w.id for w in self.workloads if w.input_specific)
        return replace(self.policy.rules(self.reported), input_specific=specific)

    @property
    def counts_instructions(self) -> bool:
        """Whether the instruction lane runs: the manifest's word, or the language default."""
        enabled = self.instructions.enabled
        if enabled is None and self.benchmarks:
            return False  # a benchmark's run is its harness's loop, not a program to count
        if enabled is None:
            return self.target.language != "go" or self.policy.primary_metric == "instructions"
        return enabled

    @property
    def benchmarks(self) -> list[Workload]:
        """The workloads that run one of the target's own benchmarks."""
        return [w for w in self.workloads if w.is_bench]

    @property
    def lane(self) -> str:
        """The lane the primary metric is read from: timed, instructions or reported."""
        if self.reported is not None:
            return "reported"
        return "instructions" if self.policy.primary_metric == "instructions" else "timed"

    def input_files(self) -> list[str]:
        """Every file a workload reads: declared inputs and stdin (target-relative)."""
        found: list[str] = []
        for workload in self.workloads:
            found.extend(workload.files)
            if workload.stdin:
                found.append(workload.stdin)
        return sorted(set(found))


def bench_kinds_filled(data: object) -> object:
    """The raw manifest with `kind` filled in where a workload names `bench` but no kind, from
    `[target] language` (go: go-bench, python: pytest-benchmark); anything else untouched."""
    if not isinstance(data, dict) or not isinstance(data.get("workloads"), list):
        return data
    target = data.get("target")
    language = target.get("language") if isinstance(target, dict) else None
    kind = bench_schema.DEFAULT_KIND.get(str(language))
    if kind is None:
        return data
    workloads = [
        {**w, "kind": kind} if isinstance(w, dict) and "bench" in w and "kind" not in w else w
        for w in data["workloads"]
    ]
    return {**data, "workloads": workloads}


def check_benchmarks(manifest: Manifest) -> None:
    """A manifest's benchmark workloads against the rest of it; KeyedError names the key."""
    benches = [(i, w) for i, w in enumerate(manifest.workloads) if w.is_bench]
    if not benches:
        return
    for index, workload in benches:
        language = bench_schema.KIND_LANGUAGE[workload.kind]
        if manifest.target.language != language:
            raise KeyedError(
                ("workloads", index, "kind"),
                f"a {workload.kind} workload runs a {language} benchmark, and the target's "
                f"language is {manifest.target.language}",
            )
    first = benches[0][0]
    if manifest.reported is None:
        raise KeyedError(
            ("workloads", first, "bench"),
            "a benchmark workload is measured by the metrics it reports: add [reported] "
            'primary = "ns_per_op", direction = "lower" (and [behaviour] compare_stdout = false)',
        )
    if manifest.instructions.enabled:
        raise KeyedError(
            ("instructions", "enabled"),
            "the instruction lane does not run benchmark workloads: its count would be the "
            "harness's calibration loop as much as the code; set enabled = false",
        )
    _metrics_yielded(manifest, benches)


def _metrics_yielded(manifest: Manifest, benches: Sequence[tuple[int, Workload]]) -> None:
    """Every [reported] metric must be one each benchmark workload can yield."""
    assert manifest.reported is not None
    for index, workload in benches:
        if workload.kind in bench_schema.OPEN_ENDED:
            continue
        yields = bench_schema.YIELDS[workload.kind]
        for name in manifest.reported.directions():
            if name not in yields:
                raise KeyedError(
                    ("workloads", index, "bench"),
                    f"a {workload.kind} workload yields {', '.join(yields)}, not {name!r}, "
                    "which [reported] names",
                )

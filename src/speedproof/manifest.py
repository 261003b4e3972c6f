"""The target's manifest, `speedproof.toml`: schema, loading and errors that name key and line."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from speedproof.errors import ManifestError
from speedproof.evidence import PolicyRules
from speedproof.tomlpos import locate

MANIFEST_NAME = "speedproof.toml"
Language = Literal["go", "python", "command"]
Runner = Literal["go", "pytest", "command"]
TierName = Literal["representative", "plausible", "stress", "holdout"]
MetricName = Literal["wall", "cpu", "memory", "binary_size", "instructions"]


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
    interpreter: str | None = None
    # command: how to build, and the program to run (relative to the target folder or on PATH).
    build: list[str] = []
    program: str | None = None

    @model_validator(mode="after")
    def _language_fields(self) -> Target:
        if self.language == "python" and (self.module is None) == (self.script is None):
            raise ValueError("a python target needs exactly one of `module` or `script`")
        if self.language == "command" and not self.program:
            raise ValueError("a command target needs `program`")
        return self


class Tests(_Strict):
    runner: Runner
    # go: packages (default ./...); pytest: paths and options; command: the whole command.
    args: list[str] = []
    timeout_s: float = Field(default=600.0, gt=0)
    # A baseline pass that fails on the candidate is re-run this many times before it counts.
    flaky_retries: int = Field(default=2, ge=0, le=10)


class Workload(_Strict):
    id: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    tier: TierName = "representative"
    args: list[str] = []
    stdin: str | None = None
    files: list[str] = []
    expected_exit: int = 0
    timeout_s: float = Field(default=60.0, gt=0)


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
    compare_stderr: bool = True
    # Files a workload writes, relative to the target folder; compared by digest like stdout.
    output_files: list[str] = []
    normalise: list[Normalise] = []


class Protect(_Strict):
    paths: list[str] = []


class Sandbox(_Strict):
    network: bool = False
    env_allow: list[str] = ["LANG", "LC_ALL", "TZ", "TERM"]


class Policy(_Strict):
    primary_metric: MetricName = "wall"
    accept_floor_pct: float = Field(default=3.0, gt=0)
    guardrail_limit_pct: float = Field(default=2.0, gt=0)
    guardrails: list[MetricName] = ["cpu", "memory"]
    statistical_support_required: bool = True
    pairs: int = Field(default=25, ge=4, le=1000)
    timeout_multiple: float = Field(default=2.0, ge=1.0)
    timeout_floor_s: float = Field(default=30.0, gt=0)

    def rules(self) -> PolicyRules:
        return PolicyRules(
            primary_metric=self.primary_metric,
            accept_floor_pct=self.accept_floor_pct,
            guardrail_limit_pct=self.guardrail_limit_pct,
            guardrails=tuple(self.guardrails),
            statistical_support_required=self.statistical_support_required,
        )


class Manifest(_Strict):
    target: Target
    tests: Tests
    workloads: list[Workload] = Field(min_length=1)
    behaviour: Behaviour = Behaviour()
    protect: Protect = Protect()
    sandbox: Sandbox = Sandbox()
    policy: Policy = Policy()

    @model_validator(mode="after")
    def _workloads_sound(self) -> Manifest:
        ids = [w.id for w in self.workloads]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"workload ids must be unique; repeated: {', '.join(duplicates)}")
        if not any(w.tier == "representative" for w in self.workloads):
            raise ValueError("at least one workload must have tier = 'representative'")
        return self

    def input_files(self) -> list[str]:
        """Every file a workload reads: declared inputs and stdin (target-relative)."""
        found: list[str] = []
        for workload in self.workloads:
            found.extend(workload.files)
            if workload.stdin:
                found.append(workload.stdin)
        return sorted(set(found))


class LoadedManifest(BaseModel):
    """A manifest plus where it lives: the file, and the target folder inside its repository."""

    model_config = ConfigDict(frozen=True)

    manifest: Manifest
    path: Path
    text: str

    @property
    def root(self) -> Path:
        return self.path.parent


def _describe(text: str, source: str, error: ValidationError) -> str:
    lines = [f"{source}: {error.error_count()} problem(s) in the manifest"]
    for item in error.errors():
        loc = [part for part in item["loc"] if isinstance(part, str | int)]
        key = ".".join(str(part) for part in loc) or "(top level)"
        line = locate(text, loc)
        where = f"line {line}" if line else "no line"
        message = item["msg"]
        if item["type"] == "extra_forbidden":
            message = "unknown key"
        lines.append(f"  {source}:{line or '?'}: `{key}` ({where}): {message}")
    return "\n".join(lines)


def parse_manifest(text: str, source: str = MANIFEST_NAME) -> Manifest:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{source}: not valid TOML: {exc}") from exc
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        raise ManifestError(_describe(text, source, exc)) from exc


def load_manifest(path: Path) -> LoadedManifest:
    path = path.resolve()
    if path.is_dir():
        path = path / MANIFEST_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read the manifest: {exc.strerror}") from exc
    return LoadedManifest(manifest=parse_manifest(text, str(path)), path=path, text=text)

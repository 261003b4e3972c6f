"""The cluster preflight: every node checked before any job is dispatched.

Each node of a Ray cluster runs one small task pinned to it (`node_probe.probe`) that reports
its speedproof version (and verifier digest, in function mode), the toolchains the run needs,
its Ray version and its host. A node that differs from the driver, or lacks a tool, or does not
answer within `PROBE_TIMEOUT_S`, is left out, with a warning naming the node (id and host) and
why; the cluster then places every job on a checked node only (`RayCluster.keep`). With no node
left the run is refused (`NoCheckedNode`). Measuring nodes that share a host, and a driver whose
host measures, are warned about: their timed runs share CPUs.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import speedproof
from speedproof.cluster.errors import ClusterUnavailable
from speedproof.cluster.jobs import NodeInfo
from speedproof.cluster.node_probe import host_facts

# A node's first task starts a worker process there: the whole preflight of 2 nodes took
# 1.6-2.2 s at load 8 on 2 cores (benchmarks/cluster_preflight.py). 60 s leaves room for a node
# busy with other work or with a cold disk; a node still silent then is left out.
PROBE_TIMEOUT_S = 60.0
FUNCTION_TOOLS = ("valgrind", "bwrap")
LOGGER = logging.getLogger("speedproof.cluster")


class NoCheckedNode(ClusterUnavailable):
    """No node of the cluster passed the preflight: nothing can run."""


@dataclass(frozen=True)
class Needs:
    """What every node must have: the driver's speedproof version, its verifier digest (None:
    not checked, outside function mode; `digest_module` is where a node computes its own) and
    these toolchains."""

    version: str = speedproof.__version__
    digest: str | None = None
    digest_module: str | None = None
    tools: tuple[str, ...] = ()


def function_needs() -> Needs:
    """Function mode: the same verifier, valgrind to count instructions, bwrap to sandbox."""
    from speedproof.functions.verifier import verifier_digest

    return Needs(
        digest=verifier_digest(), digest_module=verifier_digest.__module__, tools=FUNCTION_TOOLS
    )


def judge_needs(language: str, counts_instructions: bool, sandboxed: bool) -> Needs:
    """A target's judgement: go for Go targets, valgrind for the instruction lane, bwrap for
    the sandbox."""
    wanted = {"go": language == "go", "valgrind": counts_instructions, "bwrap": sandboxed}
    return Needs(tools=tuple(name for name, on in wanted.items() if on))


@dataclass(frozen=True)
class NodeCheck:
    """One node's answer: what it reported (None: it did not answer) and what is wrong."""

    node: NodeInfo
    report: Mapping[str, Any] | None
    problems: tuple[str, ...]

    @property
    def host(self) -> str:
        return str((self.report or {}).get("host", {}).get("key", ""))

    @property
    def hostname(self) -> str:
        return str((self.report or {}).get("host", {}).get("hostname", "?"))

    def named(self) -> str:
        return f"node {self.node.id} on {self.hostname} ({self.node.address})"


@dataclass
class Preflight:
    """The preflight's outcome: every node's check, and the warnings it gave."""

    checks: list[NodeCheck]
    warnings: list[str] = field(default_factory=list)

    @property
    def kept(self) -> list[NodeCheck]:
        return [check for check in self.checks if not check.problems]


def problems(report: Mapping[str, Any] | None, needs: Needs) -> tuple[str, ...]:
    """What keeps a node out, in words that name the fix."""
    if report is None:
        return (f"it did not answer the preflight within {PROBE_TIMEOUT_S:g} s",)
    if "error" in report:
        return (f"its preflight task failed: {report['error']}",)
    found: list[str] = []
    mine = report.get("speedproof", {})
    if mine.get("version") is None and "error" in mine:
        found.append(f"speedproof is not importable there ({mine['error']}): install it")
    elif mine.get("version") != needs.version:
        found.append(
            f"it runs speedproof {mine.get('version')} (from {mine.get('path')}), not the "
            f"driver's {needs.version}: install the same version there"
        )
    elif needs.digest is not None and mine.get("digest") != needs.digest:
        shown = str(mine.get("digest") or mine.get("error"))[:40]
        found.append(
            f"its verifier digest is {shown}, not the driver's {needs.digest[:12]}: install "
            "the same speedproof sources there"
        )
    missing = [name for name, where in report.get("tools", {}).items() if not where]
    if missing:
        found.append(f"it lacks {', '.join(missing)} on PATH: install it there")
    return tuple(found)


def judge_nodes(
    nodes: Sequence[NodeInfo], reports: Mapping[str, Mapping[str, Any] | None], needs: Needs
) -> Preflight:
    """Every node's report against `needs`; warnings for nodes left out and shared hosts."""
    checks = [
        NodeCheck(node, reports.get(node.id), problems(reports.get(node.id), needs))
        for node in nodes
    ]
    outcome = Preflight(checks)
    for check in checks:
        if check.problems:
            outcome.warnings.append(f"{check.named()} is left out: {'; '.join(check.problems)}")
    outcome.warnings.extend(shared_hosts(outcome.kept, host_facts()["key"]))
    if not outcome.kept:
        raise NoCheckedNode(
            f"no node of the cluster passed the preflight ({len(checks)} checked): "
            + " | ".join(outcome.warnings[: len(checks)])
        )
    return outcome


def shared_hosts(kept: Sequence[NodeCheck], driver_host: str) -> list[str]:
    """Warnings for measuring nodes on one host, and for the driver's host measuring."""
    by_host: dict[str, list[NodeCheck]] = defaultdict(list)
    for check in kept:
        if check.node.slots > 0:
            by_host[check.host].append(check)
    said: list[str] = []
    for host, checks in by_host.items():
        if len(checks) > 1:
            named = ", ".join(check.node.id[:12] for check in checks)
            said.append(
                f"measuring nodes {named} share one host ({checks[0].hostname}, {host}): their "
                "timed runs share its CPUs, and one re-measured on another is not elsewhere"
            )
        if host == driver_host:
            said.append(
                f"the driver's host {checks[0].hostname} is a measuring node "
                f"({checks[0].node.id[:12]}): the driver's work disturbs its timed runs; start "
                "the head without a speedproof_slot"
            )
    return said


def announce(outcome: Preflight) -> None:
    """Each warning once, through logging (printed on stderr when nothing else is set up)."""
    for warning in outcome.warnings:
        LOGGER.warning("cluster preflight: %s", warning)

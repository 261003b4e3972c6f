"""The rule registry: every rewrite rule, by language, in the order they are tried.

The order is the expected size of the win on a hot function: removing a per-call linear scan,
a per-call compilation or a comparator's n·log2(n) recomputations first, then quadratic building
(bytes grown in a loop, which CPython never extends in place; a literal appended n times), then
I/O and sorting, then changes whose benefit depends on the interpreter (list-and-join of str in
CPython, which sometimes extends strings in place; a look-up hoisted out of a loop, a few per
cent).

Each rule says what it looks for in words (`looks_for`), and may explain in words why it writes
no rewrite for a function (`explain`); `survey` reports both for every rule, so a campaign can
record why nothing was proposed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

import libcst as cst

from speedproof.agents.answers import Cause
from speedproof.agents.heuristic import (
    go_builder,
    go_output,
    go_prealloc,
    go_regexp,
    go_sort,
    go_sort_keys,
    go_writer,
    go_writer_var,
    py_bytes,
    py_hoist,
    py_inline,
    py_membership,
    py_minmax,
    py_output,
    py_regex,
    py_sort_keys,
    py_strings,
)
from speedproof.agents.heuristic.go_facts import GoUnit
from speedproof.agents.heuristic.go_facts import parse_unit as parse_go
from speedproof.agents.heuristic.py_facts import PyUnit
from speedproof.agents.heuristic.py_facts import parse_unit as parse_python
from speedproof.agents.heuristic.subject import Finding, Proposal, RewriteDeclined, Subject

U = TypeVar("U", PyUnit, GoUnit)


@dataclass(frozen=True)
class Rule(Generic[U]):
    """One rewrite rule: `find` reports its pattern (the function alone is enough), `propose`
    writes the rewrite (it needs the whole file) or declines with None, `looks_for` names the
    pattern in words, and `explain`, when the rule has one, says why it declines a function
    that shows its pattern (None when the pattern is absent, or a rewrite is written)."""

    id: str
    cause: Cause
    find: Callable[[U], Finding | None]
    propose: Callable[[U], Proposal | None]
    looks_for: str = "its pattern"
    explain: Callable[[U], str | None] | None = None


PYTHON_RULES: tuple[Rule[PyUnit], ...] = (
    Rule(
        py_membership.CONSTANT_RULE,
        "superlinear",
        py_membership.find_constant,
        py_membership.propose_constant,
        "a membership test against a module-level list or tuple of literals",
    ),
    Rule(
        py_regex.RULE,
        "repeated_work",
        py_regex.find,
        py_regex.propose,
        "a regular expression with a constant pattern compiled on every call",
        py_regex.explain,
    ),
    Rule(
        py_sort_keys.RULE,
        "repeated_work",
        py_sort_keys.find,
        py_sort_keys.propose,
        "a sort through functools.cmp_to_key whose comparator compares one key of each item",
        py_sort_keys.explain,
    ),
    Rule(
        py_membership.LITERAL_RULE,
        "superlinear",
        py_membership.find_literal,
        py_membership.propose_literal,
        "a membership test against a list or tuple display of 3 or more literals",
    ),
    Rule(
        py_bytes.RULE,
        "string_building",
        py_bytes.find,
        py_bytes.propose,
        "bytes started empty and grown with += in a loop",
        py_bytes.explain,
    ),
    Rule(
        py_strings.REPEAT_RULE,
        "repeated_work",
        py_strings.find_repeat,
        py_strings.propose_repeat,
        "a literal appended to a string once per iteration of a range loop",
    ),
    Rule(
        py_minmax.RULE,
        "superlinear",
        py_minmax.find,
        py_minmax.propose,
        "sorted(...)[0] or sorted(...)[-1]",
    ),
    Rule(
        py_inline.RULE,
        "repeated_work",
        py_inline.find,
        py_inline.propose,
        "a one-expression helper of the module called once per loop iteration",
        py_inline.explain,
    ),
    Rule(
        py_output.RULE,
        "unbuffered_io",
        py_output.find,
        py_output.propose,
        "a print call (the builtin, without file= or flush=) in a loop",
    ),
    Rule(
        py_strings.JOIN_RULE,
        "string_building",
        py_strings.find_join,
        py_strings.propose_join,
        "a string started from a literal and grown with += in a loop",
    ),
    Rule(
        py_hoist.RULE,
        "repeated_work",
        py_hoist.find,
        py_hoist.propose,
        "a method of a local set, dict or list, or a math-like module function, looked up on "
        "every loop iteration",
        py_hoist.explain,
    ),
)

GO_RULES: tuple[Rule[GoUnit], ...] = (
    Rule(
        go_regexp.RULE,
        "repeated_work",
        go_regexp.find,
        go_regexp.propose,
        "a regexp compiled inside the function from a constant pattern",
    ),
    Rule(
        go_sort_keys.RULE,
        "repeated_work",
        go_sort_keys.find,
        go_sort_keys.propose,
        "a sort.Slice comparator converting both elements on every comparison",
        go_sort_keys.explain,
    ),
    Rule(
        go_builder.RULE,
        "string_building",
        go_builder.find,
        go_builder.propose,
        "a string grown with += in a loop",
    ),
    Rule(
        go_output.RULE,
        "unbuffered_io",
        go_output.find,
        go_output.propose,
        "writes to os.Stdout in a loop, with nothing else writing or exiting",
    ),
    Rule(
        go_writer.RULE,
        "unbuffered_io",
        go_writer.find,
        go_writer.propose,
        "writes in a loop to an io.Writer parameter that a caller in the file gives os.Stdout",
        go_writer.explain,
    ),
    Rule(
        go_writer_var.RULE,
        "unbuffered_io",
        go_writer_var.find,
        go_writer_var.propose,
        "writes in a loop to a package variable `var w io.Writer = os.Stdout`, reached from main",
        go_writer_var.explain,
    ),
    Rule(
        go_sort.RULE,
        "superlinear",
        go_sort.find,
        go_sort.propose,
        "a slice sorted only to read its first and last elements",
    ),
    Rule(
        go_prealloc.RULE,
        "preallocation",
        go_prealloc.find,
        go_prealloc.propose,
        "a slice appended to once per iteration of a loop of known length",
    ),
)


def rule_ids(language: str) -> tuple[str, ...]:
    if language == "python":
        return tuple(rule.id for rule in PYTHON_RULES)
    if language == "go":
        return tuple(rule.id for rule in GO_RULES)
    return ()


def findings(subject: Subject) -> list[Finding]:
    """Every rule's finding on `subject`, in rule order (empty for other languages)."""
    if subject.language == "python":
        unit = parse_python(subject)
        return [] if unit is None else _found(PYTHON_RULES, unit)
    if subject.language == "go":
        go_unit = parse_go(subject)
        return [] if go_unit is None else _found(GO_RULES, go_unit)
    return []


def _found(rules: tuple[Rule[U], ...], unit: U) -> list[Finding]:
    return [finding for rule in rules if (finding := rule.find(unit)) is not None]


def proposals(subject: Subject, order: list[str] | None = None) -> Iterator[Proposal]:
    """The rewrites the rules write for `subject` (which must carry its file), lazily, in
    `order` (rule ids; default: the registry's order). A rule whose rewrite cannot be written
    faithfully is skipped."""
    if subject.file_text is None:
        return
    if subject.language == "python":
        unit = parse_python(subject)
        if unit is not None:
            yield from _proposed(_ordered(PYTHON_RULES, order), unit)
    elif subject.language == "go":
        go_unit = parse_go(subject)
        if go_unit is not None:
            yield from _proposed(_ordered(GO_RULES, order), go_unit)


def _ordered(rules: tuple[Rule[U], ...], order: list[str] | None) -> list[Rule[U]]:
    if order is None:
        return list(rules)
    by_id = {rule.id: rule for rule in rules}
    return [by_id[rule_id] for rule_id in order if rule_id in by_id]


def _proposed(rules: list[Rule[U]], unit: U) -> Iterator[Proposal]:
    for rule in rules:
        try:
            proposal = rule.propose(unit)
        except (RewriteDeclined, cst.ParserSyntaxError):
            continue
        if proposal is not None:
            yield proposal

"""Generic wrong candidates every adequate case must reject: a constant, the most common output,
one item per input, the reference cut to its first items."""

from __future__ import annotations

import ast
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from speedproof.corpus.adequacy_runner import Outcomes

if TYPE_CHECKING:
    # Only a type here: importing case.py would pull pydantic (~0.2 s) into every
    # process that imports this module.
    from speedproof.functions.case import Json


@dataclass(frozen=True)
class Trap:
    """A generic wrong candidate that every adequate case must reject."""

    kind: str
    source: str


def canonical_json(value: Json) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _most_common(values: Sequence[Json]) -> Json:
    """The most common value by type-strict canonical JSON (ties: the first seen)."""
    text, _ = Counter(canonical_json(v) for v in values).most_common(1)[0]
    value: Json = json.loads(text)
    return value


def _reference_outputs(reference: Outcomes) -> list[Json]:
    return [reference.output(i) for i in range(len(reference.outcomes)) if reference.ok(i)]


def _list_arguments(inputs: Sequence[list[Json]], arg_names: Sequence[str]) -> list[str]:
    """Names of the arguments that are a list in every input."""
    if not inputs:
        return []
    return [
        name
        for position, name in enumerate(arg_names)
        if all(position < len(args) and isinstance(args[position], list) for args in inputs)
    ]


def _function_source(function_name: str, arg_names: Sequence[str], expression: str) -> str:
    text = f"def {function_name}({', '.join(arg_names)}):\n    return {expression}\n"
    return ast.unparse(ast.parse(text))


def _truncated(reference_source: str, function_name: str, name: str, prefix: int) -> str:
    tree = ast.parse(reference_source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == function_name:
            node.body.insert(0, ast.parse(f"{name} = {name}[:{prefix}]").body[0])
    return ast.unparse(tree)


def _constant_traps(outputs: list[Json], arg_names: Sequence[str]) -> list[tuple[str, str]]:
    """(kind, returned expression) pairs that do not depend on list arguments."""
    traps: list[tuple[str, str]] = []
    if outputs:
        traps.append(("most-common-output", repr(_most_common(outputs))))
    traps += [("return-0", "0"), ("return-empty-list", "[]"), ("return-none", "None")]
    if arg_names:
        traps.append(("first-argument", arg_names[0]))
    if len(arg_names) >= 2:
        traps.append(("identity", f"[{', '.join(arg_names)}]"))
    return traps


def _per_item_traps(outputs: list[Json], lists: list[str]) -> list[tuple[str, str]]:
    """`[C for _ in a]` per list argument, C the most common item of list-valued outputs."""
    if not outputs or not all(isinstance(out, list) for out in outputs):
        return []
    items = [item for out in outputs if isinstance(out, list) for item in out]
    if not items:
        return []
    common = repr(_most_common(items))
    return [("constant-per-item", f"[{common} for _ in {name}]") for name in lists]


def generic_traps(
    reference_outcomes: Outcomes,
    inputs: Sequence[list[Json]],
    function_name: str,
    arg_names: Sequence[str],
    *,
    reference_source: str | None = None,
    prefix: int = 30,
) -> list[Trap]:
    """The generic wrong candidates for a case whose reference produced `reference_outcomes`.

    `truncated-prefix` (the reference with its first list argument cut to `a[:prefix]`) needs
    `reference_source`; a trap whose source equals the (unparsed) reference is left out.
    """
    outputs = _reference_outputs(reference_outcomes)
    lists = _list_arguments(inputs, arg_names)
    pairs = _constant_traps(outputs, arg_names) + _per_item_traps(outputs, lists)
    traps = [Trap(kind, _function_source(function_name, arg_names, e)) for kind, e in pairs]
    if reference_source is None:
        return traps
    if lists:
        cut = _truncated(reference_source, function_name, lists[0], prefix)
        traps.append(Trap("truncated-prefix", cut))
    reference = ast.unparse(ast.parse(reference_source))
    return [trap for trap in traps if trap.source != reference]

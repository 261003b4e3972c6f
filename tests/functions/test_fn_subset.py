"""The restricted subset: what is allowed, and errors that name the node or name and its line."""

from __future__ import annotations

import json

import pytest

from speedproof.functions.subset import (
    ALLOWED_BUILTINS,
    ALLOWED_METHODS,
    SubsetError,
    check_subset,
)
from support.paths import ROOT

ALLOWED = '''def solve(xs, m):
    """A docstring is fine."""
    seen = set()
    counts = {}
    out = []
    for i, x in enumerate(sorted(xs, reverse=True)):
        r = x % m
        if r not in seen and i >= 0:
            seen.add(r)
        counts[r] = counts.get(r, 0) + 1
        out.append(f"{r}:{counts[r]}")
    pairs = [(a, b) for a, b in zip(xs, xs[1:]) if a < b]
    while len(out) > 3:
        out.pop()
    best = max(counts.values()) if counts else -1
    return [len(seen), best, ",".join(out), len(pairs), (n := len(xs)) * 2, n]
'''


def test_a_function_inside_the_subset_passes() -> None:
    check_subset(ALLOWED)


def test_there_are_26_builtins_and_35_methods() -> None:
    assert len(ALLOWED_BUILTINS) == 26
    assert len(ALLOWED_METHODS) == 35


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def solve(xs):\n    a = 1\n    b = 2\n    return open('/etc/passwd')\n",
         "line 4: name 'open' is not an allowed builtin"),
        ("def solve(xs):\n    return __import__('os')\n",
         "line 2: name '__import__' starts with an underscore"),
        ("def solve(xs):\n    return ().__class__.__bases__[0].__subclasses__()\n",
         "line 2: attribute '__subclasses__' starts with an underscore"),
        ("def solve(xs, k=3):\n    return k\n", "line 1: default argument values are not allowed"),
        ("def solve(*xs):\n    return 1\n", "line 1: *args and **kwargs are not allowed"),
        ("def solve(xs, *, k):\n    return k\n", "line 1: keyword-only arguments are not allowed"),
        ("@staticmethod\ndef solve(xs):\n    return 1\n", "line 1: decorators are not allowed"),
        ("def solve(xs):\n    return sorted(xs, key=lambda x: -x)\n",
         "line 2: Lambda is not allowed"),
        ("def solve(xs):\n    def g():\n        return 1\n    return g()\n",
         "line 2: nested functions are not allowed"),
        ("def solve(xs):\n    class A:\n        pass\n    return 1\n",
         "line 2: ClassDef is not allowed"),
        ("import os\ndef solve(xs):\n    return 1\n",
         "line 1: Import at top level; only one def is allowed"),
        ("def solve(xs):\n    import os\n    return 1\n", "line 2: Import is not allowed"),
        ("def solve(xs):\n    global y\n    return 1\n", "line 2: Global is not allowed"),
        ("def solve(xs):\n    try:\n        return 1\n    except Exception:\n        return 2\n",
         "line 2: Try is not allowed"),
        ("def solve(xs):\n    raise ValueError\n", "line 2: Raise is not allowed"),
        ("def solve(xs):\n    with xs:\n        return 1\n", "line 2: With is not allowed"),
        ("def solve(xs):\n    yield 1\n", "line 2: Yield is not allowed"),
        ("async def solve(xs):\n    return 1\n",
         "line 1: AsyncFunctionDef at top level; only one def is allowed"),
        ("def solve(xs):\n    return xs @ xs\n", "line 2: MatMult is not allowed"),
        ("def solve(xs):\n    f = xs.append\n    return 1\n",
         "line 2: attribute 'append' may only be called, not read"),
        ("def solve(xs):\n    return '{}'.format(xs)\n",
         "line 2: attribute 'format' is not an allowed method"),
        ("def solve(xs):\n    _hidden = 1\n    return 1\n",
         "line 2: name '_hidden' starts with an underscore"),
        ("def solve(xs):\n    return b'x'\n", "line 2: constant of type bytes is not allowed"),
        ("def solve(xs):\n    del xs[0]\n    return 1\n", "line 2: Delete is not allowed"),
        ("def other(xs):\n    return 1\n", "line 1: the function must be named 'solve'"),
        ("def solve(xs):\n    return 1\ndef g():\n    return 2\n",
         "line 3: exactly one top-level def is required"),
        ("def solve(xs):\n    return getattr(xs, 'x')\n",
         "line 2: name 'getattr' is not an allowed builtin"),
        ("def solve(xs):\n    return (1\n", "line 2: syntax error"),
    ],
)  # fmt: skip
def test_a_candidate_outside_the_subset_is_refused_with_the_node_and_line(
    source: str, message: str
) -> None:
    with pytest.raises(SubsetError) as caught:
        check_subset(source)
    assert str(caught.value).startswith(message)


def test_a_name_that_is_never_assigned_is_left_to_fail_at_run_time() -> None:
    # The "dropped local" trap is a semantic failure (NameError), not a policy breach.
    check_subset("def solve(xs):\n    return [x // bucket_size for x in xs]\n")


def test_a_source_too_large_is_refused() -> None:
    with pytest.raises(SubsetError, match="longer than"):
        check_subset("def solve(xs):\n" + "    x = 1\n" * 10_000 + "    return x\n")


def test_deep_nesting_is_refused_without_crashing() -> None:
    with pytest.raises(SubsetError):
        check_subset("def solve(xs):\n    return " + "(" * 5000 + "1" + ")" * 5000 + "\n")


# Annotations: the harness compiles candidates with postponed annotations, so today nothing in an
# annotation runs; without that, an argument or return annotation runs once at definition time
# and a walrus there leaves a global the body can keep state in across calls. The subset refuses
# the hiding place itself, whatever the harness does.

ANNOTATION_RULE = "(only type names, subscripts of them, None and |)"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def solve(xs: (seen := set())):\n    return xs\n",
         "line 1: NamedExpr is not allowed in the annotation of argument 'xs'"),
        ("def solve(xs) -> (memo := {}):\n"
         "    memo[len(memo)] = len(xs)\n"
         "    return len(memo)\n",
         "line 1: NamedExpr is not allowed in the return annotation"),
        ("def solve(xs: list[int]) -> sorted([3, 1]):\n    return xs\n",
         "line 1: Call is not allowed in the return annotation"),
        ("def solve(xs: (lambda: 0)):\n    return xs\n",
         "line 1: Lambda is not allowed in the annotation of argument 'xs'"),
        ("def solve(xs: [y for y in range(3)]):\n    return xs\n",
         "line 1: ListComp is not allowed in the annotation of argument 'xs'"),
        ("def solve(xs: {y: [] for y in range(3)}):\n    return xs\n",
         "line 1: DictComp is not allowed in the annotation of argument 'xs'"),
        ("def solve(xs: list[int] | (memo := {})):\n    return xs\n",
         "line 1: NamedExpr is not allowed in the annotation of argument 'xs'"),
        ("def solve(xs: list[len([])]):\n    return xs\n",
         "line 1: Call is not allowed in the annotation of argument 'xs'"),
        ("def solve(xs: int + 1):\n    return xs\n",
         "line 1: BinOp is not allowed in the annotation of argument 'xs'"),
        ("def solve(xs: 'list[int]'):\n    return xs\n",
         "line 1: Constant is not allowed in the annotation of argument 'xs'"),
        ("def solve(\n    xs,\n    m: (t := 1),\n):\n    return xs\n",
         "line 3: NamedExpr is not allowed in the annotation of argument 'm'"),
        ("def solve(xs):\n    total: (memo := {}) = 0\n    return xs\n",
         "line 2: NamedExpr is not allowed in the annotation of 'total'"),
        ("def solve(xs):\n    total: max(1, 2) = 0\n    return xs\n",
         "line 2: Call is not allowed in the annotation of 'total'"),
        ("def solve(xs):\n    xs[0]: (k := 1) = 0\n    return xs\n",
         "line 2: NamedExpr is not allowed in the annotation of an assignment"),
    ],
)  # fmt: skip
def test_an_annotation_that_is_more_than_a_type_is_refused_with_the_node_and_line(
    source: str, message: str
) -> None:
    with pytest.raises(SubsetError) as caught:
        check_subset(source)
    assert str(caught.value) == f"{message} {ANNOTATION_RULE}"


@pytest.mark.parametrize(
    "source",
    [
        "def solve(xs: list[int] = (memo := {})):\n    return xs\n",
        "def solve(xs, memo: dict[int, int] = {}):\n    return xs\n",
    ],
)
def test_a_default_hidden_behind_an_annotation_is_still_a_refused_default(source: str) -> None:
    with pytest.raises(SubsetError) as caught:
        check_subset(source)
    assert str(caught.value) == "line 1: default argument values are not allowed"


def test_plain_type_annotations_still_pass() -> None:
    check_subset(
        "def solve(xs: list[int], m: dict[str, list[int]] | None, k: int) -> int | None:\n"
        "    seen: set[int] = set()\n"
        "    pairs: list[tuple[int, str]]\n"
        "    best: int | None = None\n"
        "    for x in xs:\n"
        "        seen.add(x % k)\n"
        "    return best if m is None else len(seen)\n"
    )


def test_a_disallowed_name_in_an_annotation_is_still_refused_by_name() -> None:
    with pytest.raises(SubsetError) as caught:
        check_subset("def solve(xs: type) -> int:\n    return 1\n")
    assert str(caught.value) == "line 1: name 'type' is not an allowed builtin"


EXAMPLES = ROOT / "src/speedproof/functions/examples"


def _shipped_sources() -> list[tuple[str, str, str]]:
    """(where, source, function name) of every corpus and example reference, and each example
    candidate (the annotated ones among them)."""
    found: list[tuple[str, str, str]] = []
    splits = [*(ROOT / "corpus").glob("v*/*.jsonl")]
    for split in sorted(s for s in splits if s.name != "adequacy.jsonl"):
        for number, line in enumerate(split.read_text(encoding="utf-8").splitlines(), 1):
            row = json.loads(line)
            where = f"{split.parent.name}/{split.name}:{number}"
            found.append((where, row["reference_source"], row["function_name"]))
    for path in sorted(EXAMPLES.glob("*.case.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        found.append((path.name, case["reference_source"], case["function_name"]))
    for path in sorted(EXAMPLES.glob("*.py")):
        found.append((path.name, path.read_text(encoding="utf-8"), "solve"))
    return found


def test_every_shipped_reference_and_example_candidate_still_passes_the_subset() -> None:
    sources = _shipped_sources()
    assert len(sources) >= 250 + 2 + 5  # four corpus splits, two example cases, five candidates
    assert any(": list[int]" in source for _, source, _ in sources)  # annotated ones are there
    refused: dict[str, str] = {}
    for where, source, function_name in sources:
        try:
            check_subset(source, function_name)
        except SubsetError as error:
            refused[where] = str(error)
    assert refused == {}

"""The restricted subset: what is allowed, and errors that name the node or name and its line."""

from __future__ import annotations

import pytest

from speedproof.functions.subset import (
    ALLOWED_BUILTINS,
    ALLOWED_METHODS,
    SubsetError,
    check_subset,
)

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

"""The in-sandbox harness: run one restricted function on a list of inputs and print strict JSON.

This file is copied into the sandbox and run as `python -S -P -B harness.py job.json`; it imports
only the standard library and never `speedproof`. Not `-I`: isolation mode implies `-E`, which
ignores PYTHONHASHSEED, and hash randomisation made two identical Cachegrind runs differ by
~150 000 Ir (measured: 64 764 863 / 64 912 499 / 64 995 328); `bwrap --clearenv` already leaves
only PATH, LANG and PYTHONHASHSEED in the environment, and the harness refuses to run with
randomised hashing.

Job (JSON object):
  token                  a per-run secret echoed in the result, kept in a local of `main` only
  source, function_name  the function, already through the subset check outside
  builtins               names of the allowed builtins: the function's only `__builtins__`
  inputs                 list of argument lists
  expected               list of [output, post-call arguments] or null
  mode                   "call": call the function on a fresh copy of each input;
                         "skip" (the calibration): everything "call" does but the call, reporting
                         `expected` instead, so its Cachegrind count is the fixed cost to subtract
  output_cap             largest result document in bytes

Result (one JSON object on stdout, UTF-8 with lone surrogates passed through): {"token",
"results": [...], "violations": [...]}; a result is {"out": value, "args": [...]} or
{"error": TypeName, "kind": "exception" | "memory" | "output"}.
The first failing input ends the run. `violations` lists audit events the harness refused.
"""

from __future__ import annotations
import __future__

import builtins
import json
import math
import sys

# Importing `typing` cost ~20 million instructions a run under Cachegrind; the harness pays for
# what it imports in every count, so these names exist for mypy only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# Audit events an honest run raises after lock-down: none (measured; `copy.deepcopy` would raise
# `builtins.id`, which is one reason inputs are copied by re-parsing their JSON instead).
_HARMLESS_EVENTS: frozenset[str] = frozenset()


class SandboxViolation(BaseException):
    """Raised by the audit hook; a BaseException so that nothing short of the harness sees it."""


class NonJson(Exception):
    """A value that is not strict JSON: the message says what was found."""


class _Guard:
    """An audit hook that refuses every event once locked, except `exec` of the job's source once.

    `open`, `os.fork`, `os.system`, `os.kill`, `os.exec`, `subprocess.Popen`, `socket.*`,
    `import`, `ctypes.*`, `sys._getframe` and `object.__getattr__` (frame and traceback
    internals) all raise events; none is needed after the job is loaded, so none is allowed.
    Not every call raises one (`posix.write`, `posix._exit`, reading `__globals__` do not): this
    hook is one layer, the subset check and the sandbox are the others.
    """

    def __init__(self) -> None:
        self.locked = False
        self.exec_allowed = 0
        self.violations: list[str] = []

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.locked or event in _HARMLESS_EVENTS:
            return
        if event == "exec" and self.exec_allowed > 0:
            self.exec_allowed -= 1
            return
        if len(self.violations) < 16:
            self.violations.append(event)
        raise SandboxViolation(event)


def check_json(value: object, depth: int = 0) -> None:
    """Raise NonJson unless `value` is strict JSON (exact types, finite floats, str keys)."""
    if depth > 200:
        raise NonJson("nested deeper than 200")
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str:
        return
    if kind is float and isinstance(value, float):
        if not math.isfinite(value):
            raise NonJson("non-finite float")
        return
    if kind is list and isinstance(value, list):
        for item in value:
            check_json(item, depth + 1)
        return
    if kind is dict and isinstance(value, dict):
        for key, item in value.items():
            if type(key) is not str:
                raise NonJson(f"dict key of type {type(key).__name__}")
            check_json(item, depth + 1)
        return
    raise NonJson(f"value of type {kind.__name__}")


def _call(fn: Callable[..., object], args: list[object]) -> tuple[object, dict[str, str] | None]:
    try:
        return fn(*args), None
    except MemoryError:
        return None, {"error": "MemoryError", "kind": "memory"}
    except SandboxViolation:
        raise
    except BaseException as exc:  # the candidate's own failure, reported by type only
        return None, {"error": type(exc).__name__, "kind": "exception"}


def _one(
    fn: Callable[..., object], args_text: str, expected: list[object] | None, mode: str
) -> dict[str, object]:
    # A fresh copy of the arguments for every call, made by the C JSON parser: copy.deepcopy
    # cost ~8 000 instructions per list item, which every count would have carried.
    copied: list[object] = json.loads(args_text)
    if mode == "call":
        out, error = _call(fn, copied)
        if error is not None:
            return dict(error)
        post: object = copied
    else:
        assert expected is not None
        out, post = expected
    try:
        check_json(out)
        check_json(post)
    except NonJson as exc:
        return {"error": f"non-JSON output: {exc}", "kind": "output"}
    return {"out": out, "args": post}


def run(job: dict[str, Any], guard: _Guard) -> dict[str, object]:
    """Compile, lock down, run every input; the result document (not yet serialised)."""
    allowed = {name: getattr(builtins, name) for name in job["builtins"]}
    namespace: dict[str, Any] = {"__builtins__": allowed}
    # Postponed annotations, asked for explicitly rather than inherited from this file's own
    # future import: an annotation never runs at definition time, and a walrus in one does not
    # compile (the subset refuses both first, ADR 0031).
    code = compile(
        job["source"],
        "<candidate>",
        "exec",
        flags=__future__.annotations.compiler_flag,
        dont_inherit=True,
    )
    inputs = [json.dumps(args) for args in job["inputs"]]
    expected: list[list[object]] | None = job["expected"]
    mode: str = job["mode"]
    guard.exec_allowed = 1
    guard.locked = True
    exec(code, namespace)
    fn = namespace[job["function_name"]]
    results: list[dict[str, object]] = []
    for index, args_text in enumerate(inputs):
        result = _one(fn, args_text, None if expected is None else expected[index], mode)
        results.append(result)
        if "error" in result:
            break
    return {"results": results, "violations": guard.violations}


def _emit(document: dict[str, object], cap: int, token: str) -> None:
    document["token"] = token
    # Exact text: `ensure_ascii` wrote an astral character and the two lone surrogates that
    # encode it as the same escapes, so they compared equal; raw UTF-8 with `surrogatepass`
    # keeps them apart (json.loads of bytes decodes the same way). Key order is kept, not sorted.
    try:
        text = json.dumps(document, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    except (ValueError, RecursionError) as exc:
        text = json.dumps({"fatal": f"unserialisable: {type(exc).__name__}", "token": token})
    data = text.encode("utf-8", "surrogatepass")
    if len(data) > cap:
        data = json.dumps(
            {"fatal": "output too large", "kind": "output_cap", "token": token}
        ).encode()
    sys.stdout.buffer.write(data)
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    """Entry point inside the sandbox; exit status is 0 whenever a document was written."""
    guard = _Guard()
    sys.addaudithook(guard)
    cap = 4 << 20
    token = ""
    try:
        if sys.flags.hash_randomization:
            raise RuntimeError("hash randomisation is on; PYTHONHASHSEED=0 did not reach Python")
        with open(argv[1], encoding="utf-8") as handle:
            job = json.load(handle)
        token = str(job.pop("token"))
        cap = int(job["output_cap"])
        document = run(job, guard)
    except SandboxViolation as exc:
        document = {"results": [], "violations": [*guard.violations, str(exc)]}
    except MemoryError:
        document = {"fatal": "MemoryError", "kind": "memory"}
    except BaseException as exc:
        document = {"fatal": f"{type(exc).__name__}: {exc}"[:500], "kind": "harness"}
    _emit(document, cap, token)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

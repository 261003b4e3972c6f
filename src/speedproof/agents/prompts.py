"""Every prompt the model roles see, in one file: a system message and a user template per role,
and the repair turn.

Each user message shows the facts a capable code model needs in readable form (source in code
fences, attempts as a list) and ends with the `<context>` JSON block holding the same facts
machine-readably, so the offline heuristic provider reasons from exactly what a model sees. The
example answer in each system message is a real instance of the role's schema (a test validates
it), so the prompt can never drift from what `roles.ask` accepts.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import jinja2

from speedproof.agents.context import ContextError, render_context

RoleName = Literal["coordinator", "explorer", "analyst", "optimizer", "reviewer"]
ROLES: tuple[RoleName, ...] = ("coordinator", "explorer", "analyst", "optimizer", "reviewer")

# What each role's context must hold (lists may be empty); a missing key is a caller's bug.
REQUIRED_KEYS: dict[RoleName, tuple[str, ...]] = {
    "coordinator": ("target", "role", "hot_functions", "history", "flags"),
    "explorer": ("target", "role", "workloads", "hot_functions"),
    "analyst": ("target", "role", "hot_functions"),
    "optimizer": ("target", "role", "function", "file", "history", "concerns", "causes"),
    "reviewer": ("target", "role", "diff", "function", "hypothesis"),
}

_PREAMBLE = (
    "You work inside speedproof, which makes programs faster without changing what they do. "
    "You only propose: deterministic code applies every proposal in a scratch checkout, runs "
    "the tests, compares every workload's stdout, stderr, exit code and written files byte for "
    "byte, and measures baseline against candidate; nothing you write can reach the verdict."
)

_ANSWER_RULE = (
    "Answer with exactly one JSON object of this shape (a ```json fence around it is fine; no "
    "second object):"
)

EXAMPLES: dict[RoleName, dict[str, Any]] = {
    "coordinator": {
        "function": "textstat.analysis.top_words",
        "rationale": "Highest self time (31%); the earlier attempt rewrote the sort key, the "
        "untried idea is a set for the stop-word test.",
    },
    "explorer": {
        "workloads": [
            {
                "id": "novel-trigrams",
                "args": ["--ngram", "3", "data/novel.txt"],
                "rationale": "Exercises the n-gram path, which no listed workload runs on this "
                "input.",
            }
        ]
    },
    "analyst": {
        "causes": [
            {
                "function": "textstat.words.is_stopword",
                "cause": "superlinear",
                "evidence": "`word in STOPWORDS` scans a 400-entry list for every word",
                "confidence": 0.8,
            }
        ]
    },
    "optimizer": {
        "hypothesis": "is_stopword scans a list per word; a frozenset lookup is constant time.",
        "kind": "function",
        "file": "textstat/words.py",
        "function": "textstat.words.is_stopword",
        "source": "def is_stopword(word: str) -> bool:\n    return word in _STOPWORD_SET\n",
        "preamble": "_STOPWORD_SET = frozenset(STOPWORDS)\n",
        "imports": [],
    },
    "reviewer": {
        "concerns": [
            {
                "severity": "high",
                "text": "The error from w.Flush() is now dropped, so a full disk exits 0.",
            }
        ],
        "recommendation": "reconsider",
    },
}

_SYSTEM: dict[RoleName, str] = {
    "coordinator": """\
{preamble}

You are the coordinator: pick the one hot function the next optimization attempt targets.
- Prefer high self time where a cheaper algorithm or fewer allocations are plausible; use
  cumulative time only when the function itself, not its callees, can be changed to help.
- Read the history. Never send the campaign back to an idea that was rejected or invalid; a
  function whose recent attempts all failed for the same reason needs a genuinely new idea.
- Flags are likely causes from static checks and earlier analysis: advice, not proof.
- `function` is a name exactly as written in the hot list; `rationale` is one or two sentences
  naming the idea to try next.

{answer_rule}
{example}""",
    "explorer": """\
{preamble}

You are the explorer: propose extra workloads that widen profiling, so hot spots that appear
only on other code paths are found. They are used for profiling only, never for a verdict.
- Vary flags and flag combinations the listed workloads do not use, with their input files.
- `args` are passed to the program as given (no shell). Use only flags the program has and
  files the listed workloads already read; never invent input files.
- At most 5 workloads; each `id` is new and uses only letters, digits, `_`, `.` and `-`;
  `rationale` names the code path it exercises.

{answer_rule}
{example}""",
    "analyst": """\
{preamble}

You are the analyst: from each hot function's source, name the likely causes of its cost.
`cause` is one of:
- allocation: objects, slices or strings created per item in a hot loop
- unbuffered_io: many small reads or writes, no buffering
- string_building: repeated concatenation of a growing string
- fast_path: a common case could skip the general work
- superlinear: quadratic loops, membership tests on lists, repeated scans
- preallocation: a growing container whose final size is known
- repeated_work: the same value recomputed, a regular expression compiled per call
- other: anything else (say what in `evidence`)
`evidence` quotes the line or construct; `confidence` (0 to 1) is your probability that
removing this cause gives a measurable speedup. Several claims per function are fine; give none
for a function with no clear cause.

{answer_rule}
{example}""",
    "optimizer": """\
{preamble}

You are the optimizer: make ONE small, behaviour-preserving change that makes the given
function faster.
- Output must stay byte-identical on every input, not only the measured workloads: same order,
  same rounding and number formatting, same errors and exit codes, same result on empty or
  malformed input.
- Never special-case particular inputs, workloads or file names; never drop error checks,
  flushing or closing.
- Tests, test data, the manifest (speedproof.toml), module and packaging files, lockfiles and
  workload inputs are protected: a change that touches them is refused.
- Earlier attempts and reviewer concerns are listed: do not repeat an idea that was rejected or
  invalid, and address the concerns.
- `hypothesis` is one sentence: what is slow and why the change is faster.

Give the change in one of three kinds, the first preferred. Paths are relative to the target
folder; the code computes the final diff, so never write line numbers yourself.
1. "function": `file`, `function` (its name), `source` (the whole new function, decorators
   included, with its doc comment if you change that); optional `preamble` (new top-level code
   placed right before the function: a hoisted constant, a helper); `imports` to add when
   missing (Python: whole import lines such as "import re"; Go: import paths such as "bufio").
2. "search_replace": `blocks`, each with `file`, `search` (text copied exactly from the file,
   occurring exactly once) and `replace`; applied in order.
3. "diff": `diff`, a unified diff.
Give only the fields of your kind.

{answer_rule}
{example}""",
    "reviewer": """\
{preamble}

You are the reviewer: argue against the proposed change. Find every way it could change what
the program prints, writes or returns, on any input, not only the measured workloads:
- errors now ignored, swallowed or reported differently; changed exit codes
- output no longer flushed or closed, or written in a different order
- changed iteration or sort order (map or dict order, sort stability, ties)
- floating-point rounding, summation order and number formatting
- shared or reused buffers, slices or mutable values aliased between uses
- special-casing particular inputs, workloads or file names
- empty, huge, non-ASCII or malformed input handled differently
Also say when the change is unlikely to be faster. Each concern names the line or construct in
one sentence, with severity low, medium or high. `recommendation` is "reconsider" when any
concern is high, else "proceed". Concerns are passed to the next proposal; they never decide
the verdict.

{answer_rule}
{example}""",
}

_USER: dict[RoleName, str] = {
    "coordinator": """\
Target: {{ target.name }} ({{ target.language }}).

Hot functions:
{% for f in hot_functions %}
- {{ f.name }} ({{ f.file }}:{{ f.start_line }}-{{ f.end_line }}): self {{ f.self_pct|pct }}, \
cumulative {{ f.cum_pct|pct }}
{% else %}
- (none)
{% endfor %}
{{ history|attempts }}
{% if flags %}
Flags:
{% for c in flags %}
- {{ c|cause }}
{% endfor %}
{% endif %}

Pick the function to attack next.

""",
    "explorer": """\
Target: {{ target.name }} ({{ target.language }}).

Workloads so far:
{% for w in workloads %}
- {{ w.id }} ({{ w.tier }}): {{ w.args|tojson }}
{% else %}
- (none)
{% endfor %}

Hot functions under these workloads:
{% for f in hot_functions %}
- {{ f.name }}: self {{ f.self_pct|pct }}, cumulative {{ f.cum_pct|pct }}
{% else %}
- (none)
{% endfor %}

Propose workloads that exercise other code paths.

""",
    "analyst": """\
Target: {{ target.name }} ({{ target.language }}).

{% for f in hot_functions %}
{{ f.name }} ({{ f.file }}:{{ f.start_line }}-{{ f.end_line }}): self {{ f.self_pct|pct }}, \
cumulative {{ f.cum_pct|pct }}
```{{ fence }}
{{ f.get("source", "")|trim }}
```

{% else %}
No hot functions.

{% endfor %}
Name the likely causes.

""",
    "optimizer": """\
Target: {{ target.name }} ({{ target.language }}).

Make {{ function.name }} faster: {{ function.file }} lines {{ function.start_line }}-\
{{ function.end_line }}, self {{ function.self_pct|pct }}, cumulative {{ function.cum_pct|pct }}.
```{{ fence }}
{{ function.source|trim }}
```
The whole of {{ file.path }} at the base revision is `file.source` in the context block.
{% if causes %}

Likely causes:
{% for c in causes %}
- {{ c|cause }}
{% endfor %}
{% endif %}
{{ history|attempts }}
{% if concerns %}

Concerns about earlier candidates:
{% for c in concerns %}
- {{ c }}
{% endfor %}
{% endif %}

Make one change.

""",
    "reviewer": """\
Target: {{ target.name }} ({{ target.language }}).

The change to {{ function.name }} ({{ function.file }}), proposed because: {{ hypothesis }}
```diff
{{ diff|trim }}
```
{% if function.get("source") %}
The function before the change:
```{{ fence }}
{{ function.source|trim }}
```
{% endif %}

Argue against it.

""",
}

REPAIR_TEMPLATE = """\
Your answer could not be used: {{ error }}
Reply with the corrected answer: one JSON object of the shape given above, nothing else."""

_FENCES = {"python": "python", "go": "go"}


def _pct(value: object) -> str:
    return f"{value:.1f}%" if isinstance(value, int | float) else "?"


def _cause(view: dict[str, Any]) -> str:
    probability = view.get("probability")
    odds = f", p={probability:.2f}" if isinstance(probability, int | float) else ""
    return (
        f"{view.get('function')}: {view.get('cause')} ({view.get('source')}{odds}) "
        f"{view.get('evidence', '')}".rstrip()
    )


def _attempts(history: list[dict[str, Any]]) -> str:
    if not history:
        return "\nNo earlier attempts."
    lines = ["", "Earlier attempts (never repeat a rejected or invalid idea):"]
    for attempt in history:
        rule = f" [{attempt['rule']}]" if attempt.get("rule") else ""
        reasons = "; ".join(attempt.get("reasons") or [])
        lines.append(
            f"- {attempt.get('candidate_id')} on {attempt.get('function')}{rule}: "
            f"{attempt.get('hypothesis')} -> {attempt.get('verdict')}"
            + (f" ({reasons})" if reasons else "")
        )
    return "\n".join(lines)


def _environment() -> jinja2.Environment:
    # Prompts are plain text, not HTML: no autoescaping; a missing key fails loudly.
    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["pct"] = _pct
    env.filters["cause"] = _cause
    env.filters["attempts"] = _attempts
    return env


_ENV = _environment()
_USER_TEMPLATES = {role: _ENV.from_string(text) for role, text in _USER.items()}
_REPAIR = _ENV.from_string(REPAIR_TEMPLATE)


def system_prompt(role: RoleName) -> str:
    """The role's fixed instructions, with its example answer."""
    example = json.dumps(EXAMPLES[role], indent=1)
    return _SYSTEM[role].format(preamble=_PREAMBLE, answer_rule=_ANSWER_RULE, example=example)


def check_context(role: RoleName, context: dict[str, Any]) -> None:
    """ContextError naming the first key the role needs and the context lacks."""
    missing = [key for key in REQUIRED_KEYS[role] if key not in context]
    if missing:
        raise ContextError(f"the {role} context lacks {', '.join(missing)}")
    if context["role"] != role:
        raise ContextError(f"a context for role {context['role']!r} was given to the {role}")
    # Holdout workloads decide whether an accept stands; a proposer that saw one could fit it.
    shown = [w for w in context.get("workloads", []) if isinstance(w, dict)]
    if any(w.get("tier") == "holdout" for w in shown):
        raise ContextError(f"the {role} context shows a holdout workload, which no role may see")


def user_prompt(role: RoleName, context: dict[str, Any]) -> str:
    """The readable facts, then the context block: the message ends with `</context>`."""
    check_context(role, context)
    target = context["target"]
    fence = _FENCES.get(str(target.get("language")), "") if isinstance(target, dict) else ""
    try:
        text = _USER_TEMPLATES[role].render(**context, fence=fence)
    except jinja2.UndefinedError as err:
        raise ContextError(f"the {role} context lacks a value its prompt needs: {err}") from err
    return text + render_context(context)


def repair_prompt(error: str) -> str:
    """The one follow-up turn after an unusable answer, quoting why it was unusable."""
    return _REPAIR.render(error=error)

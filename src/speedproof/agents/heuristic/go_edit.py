"""Turning byte edits of a Go file into an optimizer answer: kind="function" for edits of the hot
function (Go functions are top-level, so a preamble before the function is package-level code),
kind="search_replace" for edits elsewhere in its file (a caller's lines).

The proposal also carries the whole new file, written the way the answer says: the preamble
goes above the function's doc comment, missing imports are added by the campaign's own splicer
(`speedproof.agents.edits.go_splice.add_imports`), so both agree byte for byte; the file must
parse without error or the rule declines.
"""

from __future__ import annotations

from collections.abc import Sequence

from speedproof.agents.answers import OptimizerAnswer
from speedproof.agents.edits.go_splice import add_imports
from speedproof.agents.edits.result import EditRejected
from speedproof.agents.heuristic.go_facts import Edit, GoUnit, apply_edits, parses_cleanly
from speedproof.agents.heuristic.py_edit import blocks_between
from speedproof.agents.heuristic.subject import Finding, Proposal, RewriteDeclined


def function_proposal(
    unit: GoUnit,
    finding: Finding,
    edits: Sequence[Edit],
    *,
    hypothesis: str,
    preamble: Sequence[str] = (),
    imports: Sequence[str] = (),
) -> Proposal:
    start = _shown_start(unit)
    end = unit.function.end_byte
    function_bytes = apply_edits(unit.data[start:end], edits, offset=start)
    function_text = function_bytes.decode("utf-8")
    missing = _missing(unit, imports)
    preamble_text = "\n".join(preamble).rstrip("\n") + "\n" if preamble else None
    top = _comment_start(unit)
    new_data = (
        unit.data[:top]
        + (preamble_text.encode("utf-8") + b"\n" if preamble_text else b"")
        + unit.data[top:start]
        + function_bytes
        + unit.data[end:]
    )
    new_text = _finished(new_data, missing)
    answer = OptimizerAnswer(
        hypothesis=hypothesis,
        rule=finding.rule,
        kind="function",
        file=unit.subject.file,
        function=unit.subject.name,
        source=function_text if function_text.endswith("\n") else function_text + "\n",
        preamble=preamble_text,
        imports=missing,
    )
    return Proposal(finding=finding, answer=answer, files={unit.subject.file: new_text})


def _missing(unit: GoUnit, imports: Sequence[str]) -> list[str]:
    """The import paths of `imports` the file does not import yet, in order."""
    present = unit.imports()
    return [path for path in imports if path not in present]


def _finished(data: bytes, missing: Sequence[str]) -> str:
    """The new file's text: `data` with the `missing` imports added by the campaign's own
    splicer, which must accept them, and the result must parse, or the rule declines."""
    try:
        text = add_imports(data, missing).decode("utf-8")
    except EditRejected as err:
        raise RewriteDeclined(str(err)) from err
    if not parses_cleanly(text):
        raise RewriteDeclined("the rewritten file does not parse")
    return text


def _comment_start(unit: GoUnit) -> int:
    """Where the function's doc comment (the comment lines right above it) starts."""
    start = unit.function.start_byte
    node = unit.function.prev_sibling
    while (
        node is not None
        and node.type == "comment"
        and node.end_point.row + 1 == (_row_of(unit, start))
    ):
        start = node.start_byte
        node = node.prev_sibling
    return unit.line_start(start)


def _row_of(unit: GoUnit, offset: int) -> int:
    return unit.data.count(b"\n", 0, offset)


def _shown_start(unit: GoUnit) -> int:
    """The function's first byte, or its doc comment's when the role was shown the comment."""
    if unit.subject.source.lstrip().startswith("//"):
        return _comment_start(unit)
    return unit.function.start_byte


def file_proposal(
    unit: GoUnit,
    finding: Finding,
    edits: Sequence[Edit],
    *,
    hypothesis: str,
    imports: Sequence[str] = (),
) -> Proposal:
    """A change outside the hot function (a caller's lines): search/replace blocks computed from
    the whole file before and after `edits` (byte ranges of the file) and missing `imports`."""
    path = unit.subject.file
    new_text = _finished(apply_edits(unit.data, edits), _missing(unit, imports))
    answer = OptimizerAnswer(
        hypothesis=hypothesis,
        rule=finding.rule,
        kind="search_replace",
        blocks=blocks_between(path, unit.data.decode("utf-8"), new_text),
    )
    return Proposal(finding=finding, answer=answer, files={path: new_text})

"""Views of the bundled examples' hot functions, read from the examples' files, as discovery
hands them to a role."""

from __future__ import annotations

import ast
from typing import Any

from support.paths import EXAMPLES


def python_view(path: str, qualified: str, self_pct: float = 10.0) -> dict[str, Any]:
    """A HotFunctionView of a textstat function, read from the example's file."""
    text = (EXAMPLES / "textstat" / path).read_text()
    body: list[ast.stmt] = ast.parse(text).body
    node: ast.stmt | None = None
    for part in qualified.split(".")[2:]:
        node = next(
            n for n in body if isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name == part
        )
        body = node.body
    assert isinstance(node, ast.FunctionDef) and node.end_lineno is not None
    lines = text.splitlines(keepends=True)
    return {
        "name": qualified,
        "file": path,
        "start_line": node.lineno,
        "end_line": node.end_lineno,
        "self_pct": self_pct,
        "cum_pct": self_pct + 5,
        "source": "".join(lines[node.lineno - 1 : node.end_lineno]),
    }

"""How a command ends in an error (exit 3): the message on stderr and, under `--json`, one JSON
object on stdout as well, so a script that parses stdout always has a document to parse.

The object is `{"verdict": "error", "message": ..., "kind": ..., "exit_code": 3}`: `verdict`
sits where a judged candidate's verdict sits, `kind` is the error's class (`ManifestError`,
`InfrastructureError`, `SandboxUnavailable`, ...), and `message` is the sentence stderr shows.
"""

from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.markup import escape

EXIT_ERROR = 3

_errors = Console(stderr=True)


def error_document(message: str, kind: str | None = None) -> dict[str, object]:
    return {"verdict": "error", "message": message, "kind": kind, "exit_code": EXIT_ERROR}


def fail(message: str, *, as_json: bool = False, kind: str | None = None) -> typer.Exit:
    """Say `message` and return the exit to raise. Escaped: messages name manifest tables such
    as `[policy] max_pairs`, which rich would otherwise swallow as markup."""
    # Not wrapped: a message is one line to copy from (a pip command, a manifest key).
    _errors.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    if as_json:
        typer.echo(json.dumps(error_document(message, kind), indent=2))
    return typer.Exit(EXIT_ERROR)


def fail_on(exc: BaseException, *, as_json: bool = False) -> typer.Exit:
    """`fail` with the exception's text and class."""
    return fail(str(exc), as_json=as_json, kind=type(exc).__name__)

"""What `speedproof init` needs at start-up: its command line, split at `--`.

Imported by `speedproof.cli` when the program starts, so it imports nothing but typer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from typer.core import TyperCommand

if TYPE_CHECKING:
    from typer import _click

# Where the words after `--` wait in the click context for the command to read them.
COMMAND_KEY = "speedproof.init.command"


class SplitAtDashes(TyperCommand):
    """Everything after the first `--` is the target's own command line, kept whole.

    click hands the words after `--` to the positional arguments in order, so `init --
    tool big.sql` would read `tool` as PATH; cut before click parses, they never reach it.
    """

    def parse_args(self, ctx: _click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            cut = args.index("--")
            ctx.meta[COMMAND_KEY] = tuple(args[cut + 1 :])
            args = args[:cut]
        return list(super().parse_args(ctx, args))


def command_of(ctx: Any) -> tuple[str, ...]:
    """The words after `--` (none when there was no `--`)."""
    return tuple(ctx.meta.get(COMMAND_KEY, ()))

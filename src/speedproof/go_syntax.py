"""Go source as tree-sitter-go reads it: one parser, set up once, for every reader of Go code.

A ground module (it imports nothing of speedproof), so the patch guard and the edit splicer can
both read Go without one importing the other.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

import tree_sitter_go
from tree_sitter import Language, Node, Parser


@cache
def go_parser() -> Parser:
    return Parser(Language(tree_sitter_go.language()))


def parse(data: bytes) -> Node:
    """The syntax tree of a Go source; tree-sitter reads broken sources too (ERROR nodes)."""
    return go_parser().parse(data).root_node


def walk(node: Node) -> Iterator[Node]:
    """`node` and everything under it, each node before its children, in source order; a stack,
    not recursion: a deeply nested expression is deeper than Python's recursion limit."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))

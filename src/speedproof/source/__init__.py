"""The readers of the target's source: one for Go (tree-sitter-go), one for Python (`ast` for
spans, libcst for structure), and what both hand on (`SourceFunction`).

Discovery, the advisor and the offline proposer read the target's code only through these
modules; each keeps what is its own (profiles and ranking; questions, hazards and vetoes; the
rewrite rules). The package stands low: it imports nothing of those three layers.
"""

"""The heuristic proposer: deterministic rules standing in for a language model.

Each rule finds one common, well-understood inefficiency in a hot function (libcst for Python,
tree-sitter-go for Go) and writes the rewrite that removes it, declining whenever it cannot
show the rewrite keeps the program's output. The rules guess like a model would; the judge
decides. `RULESET_VERSION` names the rule set in every answer (`model = "heuristic-<version>"`)
so the ledger tells which rules proposed a candidate.
"""

RULESET_VERSION = "2"

"""`speedproof verify`: accepted candidates judged again, alone and stacked.

- `verification`: `Verification`, the re-judgements and the flags they leave in the ledger.
- `command`: the `speedproof verify` command (lazy: registered when it runs).
"""

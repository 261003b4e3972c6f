"""Function-mode corpus: seeded slow/fast pairs, splits, leakage audit, and the training loop.

The known-fast source of a pair lives only in `TrustedPair` inside the generating process; what
is written to disk is the slow reference and its hidden inputs (see `generate.py`).
"""

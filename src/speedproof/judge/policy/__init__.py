"""The policy: `decide` turns `Evidence` into a `Verdict`. Pure: its four modules import one
another and the standard library's pure parts, nothing else of speedproof (the pure-policy
contract in pyproject.toml; tests/judge/policy/test_policy.py). Nothing is imported here."""

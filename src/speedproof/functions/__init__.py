"""Function mode: restricted pure-Python functions, verified in a sandbox, rewarded by Ir counts."""

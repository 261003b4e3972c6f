"""A folder holding only speedproof's runner for Python benchmark workloads, so that it alone
can be shown to a benchmark run; the bootstrap imports `speedproof_bench` from it as a top-level
module."""

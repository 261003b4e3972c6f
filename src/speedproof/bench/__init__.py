"""Benchmark workloads: a project's own benchmarks as the measured unit.

A workload of kind `go-bench`, `pytest-benchmark` or `pyperf` runs one benchmark of the target's
own (a Go `testing.B` function, a pytest-benchmark test, a pyperf script) once per run, and its
run yields named metrics read from the benchmark's own output, one parser per format
(`measure.reported.read_metrics`). From there on it is a workload of the reported lane like any
other: the same gates, ABBA pairs, statistics, policy, holdouts and ledger.

- `schema`: the kinds, what each yields, and the manifest's checks of their keys;
- `command`: the command line and working folder of one run;
- `go_output`, `pytest_json`, `pyperf_json`: one parser per format;
- `consistency`: a reported total against the run's measured wall time;
- `build`: the Go test binary (compiled by speedproof's build step) and the Python program;
- `runner/`: the module a Python benchmark starts with inside the sandbox;
- `preflight`: `speedproof manifest validate`'s check that the named benchmark exists.
"""

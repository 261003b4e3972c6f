"""The target's own tests, run on both sides, and the test gate over them (`gate.gate_tests`).

Go: `go_test_args`, `go_canary`, `go_processes`, `go_report`, `go_select`. Python: `python_tests`,
the pytest plugin in `pytest_record/`, the unittest runner (`unittest_runner`,
`unittest_record/`), `junit`. Both: the record pipe (`record_channel`) and the record the runners
write (`run_record`). The plugin and runner folders are the folders of speedproof a target's
tests can see. Nothing is imported here."""

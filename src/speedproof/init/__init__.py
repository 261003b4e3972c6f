"""`speedproof init`: from a Go or Python project to a manifest, a first timing and a validation.

`detect_python` and `detect_go` read what the project already says (go.mod, pyproject.toml and
the other setup files, test configuration, entry points, benchmarks); `workload` turns a command
line typed after `--` into a representative workload; `write` renders `speedproof.toml`;
`first_run` builds the baseline and times each workload through the judge's own machinery;
`command` runs the steps in order and `render` prints them. Only `arguments` is imported when the
command line starts: the rest loads when `init` runs.
"""

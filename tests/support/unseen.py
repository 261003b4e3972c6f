"""The stored-answer attack on textstat: a patch that recognises the representative workloads.

The patched `main` looks at its argv and the size of the file it names; when both are those of a
representative workload it writes that workload's output, taken from the baseline and embedded in
the source, and exits, without reading the file. Its output is byte-identical on the visible
inputs and it runs in a tenth of the time, so a judge that times only those inputs accepts it.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from speedproof.manifest_loading import load_manifest
from support.git import git_run

_HOOK = """

# Answers for the inputs this program is measured on, keyed by argv and input size.
_STORED = {stored!r}


def _stored_answer(argv: list[str]) -> bytes | None:
    try:
        size = os.path.getsize(argv[-1])
    except (IndexError, OSError):
        return None
    return _STORED.get((tuple(argv), size))


def main(argv: list[str] | None = None) -> int:
    answer = _stored_answer(sys.argv[1:] if argv is None else argv)
    if answer is not None:
        sys.stdout.flush()
        sys.stdout.buffer.write(answer)
        return 0
    return _computed_main(argv)
"""


def baseline_outputs(repo: Path) -> dict[tuple[tuple[str, ...], int], bytes]:
    """stdout of every representative workload, keyed the way the attack recognises them."""
    manifest = load_manifest(repo).manifest
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    stored: dict[tuple[tuple[str, ...], int], bytes] = {}
    for workload in manifest.workloads:
        if workload.tier != "representative":
            continue
        argv = [sys.executable, "-m", "textstat", *workload.args]
        done = subprocess.run(argv, cwd=repo, capture_output=True, env=env, check=True)
        size = (repo / workload.args[-1]).stat().st_size
        stored[(tuple(workload.args), size)] = done.stdout
    return stored


def stored_answer_patch(repo: Path) -> str:
    """The attack as a diff against `repo` (a textstat checkout), which is left as it was."""
    cli = repo / "textstat" / "cli.py"
    original = cli.read_text(encoding="utf-8")
    hook = _HOOK.format(stored=baseline_outputs(repo))
    patched = original.replace("def main(", "def _computed_main(", 1).replace(
        "import argparse\n", "import argparse\nimport os\n", 1
    )
    cli.write_text(patched + hook, encoding="utf-8")
    try:
        return git_run(repo, "diff").stdout
    finally:
        cli.write_text(original, encoding="utf-8")


_GO_HOOK = """
// Answers for the inputs this program is measured on, keyed by argv and input size.
var storedAnswers = map[string]string{{
{entries}
}}

func storedAnswer(args []string) (string, bool) {{
	if len(args) == 0 {{
		return "", false
	}}
	info, err := os.Stat(args[len(args)-1])
	if err != nil {{
		return "", false
	}}
	answer, ok := storedAnswers[fmt.Sprintf("%q|%d", args, info.Size())]
	return answer, ok
}}
"""


def _go_key(args: list[str], size: int) -> str:
    """Go's fmt.Sprintf("%q|%d", args, size): each argument quoted, in brackets."""
    quoted = " ".join(json.dumps(a) for a in args)
    return f"[{quoted}]|{size}"


def stored_answer_patch_go(repo: Path, *, tmp: Path) -> str:
    """The same attack on logstat (Go): `run` prints the stored report of a visible input."""
    tmp.mkdir(parents=True, exist_ok=True)
    binary = tmp / "logstat-base"
    go = str(Path(sys.executable).parent / "go")
    subprocess.run([go, "build", "-o", str(binary), "."], cwd=repo, check=True)
    manifest = load_manifest(repo).manifest
    entries = []
    for workload in manifest.workloads:
        if workload.tier != "representative":
            continue
        out = subprocess.run(
            [str(binary), *workload.args], cwd=repo, capture_output=True, check=True
        ).stdout
        size = (repo / workload.args[-1]).stat().st_size
        key = _go_key(list(workload.args), size)
        entries.append(f"\t{json.dumps(key)}: {json.dumps(out.decode())},")
    main = repo / "main.go"
    original = main.read_text(encoding="utf-8")
    patched = original.replace(
        "\tst := newStats(*slow)\n",
        "\tif answer, ok := storedAnswer(args); ok {\n"
        "\t\tio.WriteString(stdout, answer)\n\t\treturn 0\n\t}\n"
        "\tst := newStats(*slow)\n",
        1,
    )
    main.write_text(patched + _GO_HOOK.format(entries="\n".join(entries)), encoding="utf-8")
    try:
        return git_run(repo, "diff").stdout
    finally:
        main.write_text(original, encoding="utf-8")


_GO_CONTENT_HOOK = """
// Answers for the inputs this program is measured on, keyed by the flags and the SHA-256 of
// the input (never its name, size or time).
var storedAnswers = map[string]string{{
{entries}
}}

func storedAnswer(args []string) (string, bool) {{
	if len(args) == 0 {{
		return "", false
	}}
	data, err := os.ReadFile(args[len(args)-1])
	if err != nil {{
		return "", false
	}}
	sum := sha256.Sum256(data)
	key := fmt.Sprintf("%q|%s", args[:len(args)-1], hex.EncodeToString(sum[:]))
	answer, ok := storedAnswers[key]
	return answer, ok
}}
"""


def content_keyed_patch_go(repo: Path, *, tmp: Path) -> str:
    """The attack keyed by what the input holds, not where or how big it is: a twin that copies
    the bytes under a fresh name is answered from the table too."""
    tmp.mkdir(parents=True, exist_ok=True)
    binary = tmp / "logstat-base"
    go = str(Path(sys.executable).parent / "go")
    subprocess.run([go, "build", "-o", str(binary), "."], cwd=repo, check=True)
    manifest = load_manifest(repo).manifest
    entries = []
    for workload in manifest.workloads:
        if workload.tier != "representative":
            continue
        out = subprocess.run(
            [str(binary), *workload.args], cwd=repo, capture_output=True, check=True
        ).stdout
        digest = hashlib.sha256((repo / workload.args[-1]).read_bytes()).hexdigest()
        flags = _go_key(list(workload.args[:-1]), 0).rsplit("|", 1)[0]
        entries.append(f"\t{json.dumps(f'{flags}|{digest}')}: {json.dumps(out.decode())},")
    main = repo / "main.go"
    original = main.read_text(encoding="utf-8")
    patched = original.replace(
        "\tst := newStats(*slow)\n",
        "\tif answer, ok := storedAnswer(args); ok {\n"
        "\t\tio.WriteString(stdout, answer)\n\t\treturn 0\n\t}\n"
        "\tst := newStats(*slow)\n",
        1,
    ).replace("import (\n", 'import (\n\t"crypto/sha256"\n\t"encoding/hex"\n', 1)
    main.write_text(patched + _GO_CONTENT_HOOK.format(entries="\n".join(entries)), encoding="utf-8")
    try:
        return git_run(repo, "diff").stdout
    finally:
        main.write_text(original, encoding="utf-8")

"""Generated inputs: a workload's generator run once a judgement with a secret seed.

`generate = ["python3", "gen.py", "--seed", "{seed}", "--out", "{out}"]` runs in the sandbox like a
build, in the baseline's target folder (a candidate's patch cannot change the generator), and may
write only `{out}`, a fresh folder outside every worktree. The seed comes from `secrets`, so no
candidate can know the inputs before they exist; the judge records it in the ledger's facts, so
the inputs can be made again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.toolchain import Context, Tree, process_log
from speedproof.manifest import OUT_TOKEN, SEED_TOKEN, Workload

# A generator writes test inputs, not a data set: five minutes covers the bundled one (0.3 s)
# a thousand times over on a cold disk.
GENERATE_TIMEOUT_S = 300.0
# Seeds are drawn below 2**31 so that any generator's integer parsing takes them.
SEED_LIMIT = 2**31
_LOG_TAIL = 2000
READ_ONLY = 0o444


@dataclass(frozen=True)
class Generated:
    """One generator run: where it wrote, what it ran and how long it took."""

    workload: str
    argv: tuple[str, ...]
    out: Path
    seconds: float
    log: str


def fill(text: str, values: Mapping[str, str]) -> str:
    """`text` with each placeholder replaced; nothing else in it is read as a format string."""
    for token, value in values.items():
        text = text.replace(token, value)
    return text


def filled(workload: Workload, values: Mapping[str, str]) -> Workload:
    """The workload with placeholders in its args and stdin replaced."""
    stdin = None if workload.stdin is None else fill(workload.stdin, values)
    args = [fill(arg, values) for arg in workload.args]
    return workload.model_copy(update={"args": args, "stdin": stdin})


def generate(
    workload: Workload, *, context: Context, tree: Tree, out: Path, seed: int
) -> Generated:
    """Run the workload's generator into `out`; a generator that fails is the target's problem,
    not the candidate's, so it stops the judgement with an `InfrastructureError`."""
    values = {OUT_TOKEN: str(out), SEED_TOKEN: str(seed)}
    argv = tuple(fill(part, values) for part in workload.generate)
    result = context.run(
        argv,
        cwd=tree.root,
        writable=[out],
        readable=[tree.worktree],
        env=context.env(),
        timeout_s=GENERATE_TIMEOUT_S,
    )
    log = process_log(result)[-_LOG_TAIL:]
    if result.timed_out or result.exit_code != 0:
        raise InfrastructureError(
            f"the generator of workload {workload.id!r} failed ({' '.join(argv)}):\n{log}"
        )
    for path in out.rglob("*"):
        if path.is_file() and not path.is_symlink():
            path.chmod(READ_ONLY)
    return Generated(workload.id, argv, out, result.wall_s, log)

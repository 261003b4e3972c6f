"""A throwaway, detached git worktree at a committed revision, removed on every way out.

Layout: `mkdtemp(prefix)` makes a holder folder; the worktree is `<holder>/tree` and the owner
marker `<holder>/owner.json` sits beside it, outside the tree, so `git status` in the worktree
never sees it. A process killed with SIGKILL leaves both behind; `cleanup_stale` removes them
once the recorded owner is gone.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.git import decode_path, git, git_ok, repository_root

DEFAULT_PREFIX = "speedproof-"
TREE_NAME = "tree"
MARKER_NAME = "owner.json"

_SignalHandler = Callable[[int, FrameType | None], object] | int | signal.Handlers | None


class Terminated(SystemExit):
    """SIGTERM arrived while a worktree was live.

    A SystemExit so that `except Exception` in callers cannot swallow it, and so an uncaught one
    ends the process with 128 + 15 = 143, the status a shell reports for a SIGTERM'd process.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum


@dataclass(frozen=True)
class Worktree:
    """A live worktree: `path` is its root, checked out detached at `rev` (a full sha)."""

    repo: Path
    rev: str
    path: Path
    holder: Path

    @classmethod
    def create(
        cls, repo: Path, rev: str, *, prefix: str = DEFAULT_PREFIX
    ) -> AbstractContextManager[Worktree]:
        """`with Worktree.create(repo, rev) as wt:` — the worktree exists only inside the block."""
        return worktree(repo, rev, prefix=prefix)


def resolve_rev(repo: Path, rev: str) -> str:
    """The full sha of the commit `rev` names in `repo`."""
    top = repository_root(repo)
    # A revision starting with `-` would be read by git as an option.
    if not rev or rev.startswith("-"):
        raise InfrastructureError(f"{rev!r} is not a revision name")
    record, out = git(top, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if not record.ok:
        raise InfrastructureError(f"{top}: unknown revision {rev!r} (no commit by that name)")
    return out.decode("ascii").strip()


@contextmanager
def worktree(repo: Path, rev: str, *, prefix: str = DEFAULT_PREFIX) -> Iterator[Worktree]:
    """Make a detached worktree of `repo` at `rev` in a new temporary folder; always remove it.

    Removal happens on normal exit, on any exception, on Ctrl-C (KeyboardInterrupt) and on
    SIGTERM, which this turns into `Terminated` while the worktree is live.
    """
    top = repository_root(repo)
    sha = resolve_rev(top, rev)
    with _sigterm_raises():
        holder: Path | None = None
        try:
            holder = Path(tempfile.mkdtemp(prefix=prefix)).resolve()
            write_marker(holder, top)
            tree = holder / TREE_NAME
            git_ok(top, "worktree", "add", "--detach", str(tree), sha)
            yield Worktree(repo=top, rev=sha, path=tree, holder=holder)
        finally:
            if holder is not None:
                with _signals_deferred():
                    remove_holder(top, holder)


def cleanup_stale(repo: Path, *, prefix: str = DEFAULT_PREFIX) -> list[Path]:
    """Remove speedproof worktrees of `repo` whose owning process is gone; return their paths."""
    top = repository_root(repo)
    git(top, "worktree", "prune")
    removed: list[Path] = []
    for path in _registered_worktrees(top):
        holder = path.parent
        if path == top or path.name != TREE_NAME or not holder.name.startswith(prefix):
            continue
        if owner_alive(holder / MARKER_NAME):
            continue
        remove_holder(top, holder)
        removed.append(path)
    return removed


def remove_holder(repo: Path, holder: Path) -> None:
    """Unregister and delete the worktree in `holder`, then the holder itself."""
    tree = holder / TREE_NAME
    if tree.exists():
        # Twice --force: also removes a worktree that is dirty, or locked.
        git(repo, "worktree", "remove", "--force", "--force", str(tree))
    remove_tree(holder)
    git(repo, "worktree", "prune")
    if holder.exists():
        raise InfrastructureError(f"could not remove the temporary worktree {holder}")


def _registered_worktrees(top: Path) -> list[Path]:
    out = git_ok(top, "worktree", "list", "--porcelain", "-z")
    paths = []
    for field in out.split(b"\0"):
        if field.startswith(b"worktree "):
            paths.append(Path(decode_path(field[len(b"worktree ") :])).resolve())
    return paths


def write_marker(holder: Path, repo: Path | None = None) -> None:
    """Record this process as the owner of `holder` (what `owner_alive` reads back)."""
    pid = os.getpid()
    owner = {"pid": pid, "started": _start_time(pid), "repo": None if repo is None else str(repo)}
    (holder / MARKER_NAME).write_text(json.dumps(owner), encoding="utf-8")


def _proc_stat(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat after the command name, or None off Linux or if pid is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def _start_time(pid: int) -> str | None:
    # Field 22 of stat is the start time; it tells a reused pid from the original owner.
    fields = _proc_stat(pid)
    return fields[19] if fields and len(fields) > 19 else None


def owner_alive(marker: Path) -> bool:
    """Whether the process recorded in `marker` still runs; a missing or broken marker is dead."""
    try:
        owner = json.loads(marker.read_text(encoding="utf-8"))
        pid = int(owner["pid"])
        started = owner.get("started")
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, owned by someone else
    fields = _proc_stat(pid)
    if fields is None:
        return True
    return fields[0] != "Z" and (started is None or _start_time(pid) == started)


def remove_tree(path: Path) -> None:
    """Delete a tree even where a build left read-only folders (Go's module cache does)."""

    def make_writable_and_retry(func: Callable[[str], object], name: str, _exc: object) -> None:
        try:
            os.chmod(os.path.dirname(name), 0o700)
            if not os.path.islink(name):
                os.chmod(name, 0o700)
            func(name)
        except OSError:
            pass  # reported by the existence check of the caller

    if not (path.exists() or path.is_symlink()):
        return
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=make_writable_and_retry)
    else:
        shutil.rmtree(path, onerror=make_writable_and_retry)


def _in_main_thread() -> bool:
    # Python only lets the main thread install signal handlers.
    return threading.current_thread() is threading.main_thread()


def _restore(signum: int, handler: _SignalHandler) -> None:
    # None means a handler installed outside Python; the default is the closest we can restore.
    signal.signal(signum, signal.SIG_DFL if handler is None else handler)


def _raise_terminated(signum: int, _frame: FrameType | None) -> None:
    raise Terminated(signum)


@contextmanager
def _sigterm_raises() -> Iterator[None]:
    """While inside, SIGTERM raises `Terminated` so `finally` blocks run; then restore."""
    if not _in_main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        _restore(signal.SIGTERM, previous)


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM during cleanup, then deliver them.

    A second Ctrl-C in the middle of `git worktree remove` must not leave half a worktree.
    """
    if not _in_main_thread():
        yield
        return
    caught: list[int] = []

    def hold(signum: int, _frame: FrameType | None) -> None:
        caught.append(signum)

    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    for signum in previous:
        signal.signal(signum, hold)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            _restore(signum, handler)
        for pending in dict.fromkeys(caught):
            signal.raise_signal(pending)

"""The declared output files of a run: placed, emptied before each run, read back and digested.

In the sandbox the tree is read-only and each declared output file is a per-run copy outside it,
bound over an empty placeholder (`speedproof.ground.program.output_path`); a copy the run never
wrote reads as absent. Unsandboxed, the files are in the tree and removed before each run.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.program import Program, output_path

FileKind = Literal["file", "absent", "other"]

# How much normalised content a reference keeps for describing a difference in words. Digests
# cover everything; beyond this a difference is reported by digest only. Four MiB per stream
# bounds a reference's memory while covering every workload output a person would read.
KEPT_BYTES = 4 * 1024 * 1024
_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class OutputDigest:
    path: str
    kind: FileKind
    sha256: str | None


@dataclass(frozen=True)
class OutputFile:
    """One declared output file as read right after a run: its digest and its first bytes."""

    digest: OutputDigest
    content: bytes = field(repr=False)


def _output_path(root: Path, relative: str) -> Path:
    pure = PurePosixPath(relative)
    if pure.is_absolute() or ".." in pure.parts or not pure.parts:
        raise InfrastructureError(
            f"output file {relative!r} must be a relative path inside the target folder"
        )
    return root / pure


def _inside(root: Path, path: Path) -> bool:
    """True when the folder holding `path` is inside `root` once symlinks are followed."""
    return path.parent.resolve().is_relative_to(root.resolve())


def _digest_file(path: Path) -> tuple[str, bytes]:
    digest = hashlib.sha256()
    kept = bytearray()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            if len(kept) < KEPT_BYTES:
                kept.extend(chunk[: KEPT_BYTES - len(kept)])
    return digest.hexdigest(), bytes(kept)


def read_output(root: Path, relative: str) -> OutputFile:
    """Digest one output file without following a symlink; anything but a regular file inside
    the target folder is kind "other", which never matches a regular file."""
    path = _output_path(root, relative)
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return OutputFile(OutputDigest(relative, "absent", None), b"")
    except OSError:
        return OutputFile(OutputDigest(relative, "other", None), b"")
    if not stat.S_ISREG(mode) or not _inside(root, path):
        return OutputFile(OutputDigest(relative, "other", None), b"")
    return _read_file(path, relative)


def _read_file(path: Path, relative: str) -> OutputFile:
    try:
        sha, kept = _digest_file(path)
    except OSError as exc:
        raise InfrastructureError(f"cannot read output file {path}: {exc.strerror}") from exc
    return OutputFile(OutputDigest(relative, "file", sha), kept)


def _read_copy(program: Program, relative: str) -> OutputFile:
    """A run's own copy of an output file; one still as `_reset_copy` left it is absent."""
    path = output_path(program, relative)
    try:
        info = path.stat()
    except FileNotFoundError:
        return OutputFile(OutputDigest(relative, "absent", None), b"")
    if info.st_size == 0 and info.st_mtime_ns == 0:
        return OutputFile(OutputDigest(relative, "absent", None), b"")
    return _read_file(path, relative)


def read_outputs(program: Program, relatives: Sequence[str]) -> tuple[OutputFile, ...]:
    if program.outputs is not None:
        return tuple(_read_copy(program, relative) for relative in relatives)
    return tuple(read_output(program.root, relative) for relative in relatives)


def place_outputs(program: Program) -> None:
    """Empty placeholders in the tree for a sandboxed program's declared output files.

    bubblewrap binds a file only over a path that exists, and the tree is read-only inside;
    the judge makes them once, before it takes the tree's snapshot.
    """
    if program.outputs is None:
        return
    program.outputs.mkdir(parents=True, exist_ok=True)
    for relative in program.output_files:
        path = _output_path(program.root, relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        if not _inside(program.root, path):
            raise InfrastructureError(f"output file {relative!r} resolves outside {program.root}")
        if not path.is_file() or path.is_symlink():
            path.unlink(missing_ok=True)
            path.touch()
        _reset_copy(output_path(program, relative))


def _reset_copy(path: Path) -> None:
    # An empty file stamped with the epoch: any write, even an empty truncating one, moves
    # its modification time, so a run that wrote nothing is told from one that wrote "".
    path.unlink(missing_ok=True)
    path.touch()
    os.utime(path, ns=(0, 0))


def clear_outputs(program: Program, relatives: Sequence[str]) -> None:
    """Empty every declared output file before a run, so a stale one can never match."""
    if program.outputs is not None:
        for relative in relatives:
            _reset_copy(output_path(program, relative))
        return
    root = program.root
    for relative in relatives:
        path = _output_path(root, relative)
        if not path.is_symlink() and not path.exists():
            continue
        if not _inside(root, path):
            raise InfrastructureError(
                f"refusing to remove output file {path}: its folder resolves outside {root}"
            )
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError as exc:
            raise InfrastructureError(f"cannot remove output file {path}: {exc}") from exc

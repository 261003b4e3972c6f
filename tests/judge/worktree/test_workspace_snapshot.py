"""Snapshots of a folder taken before and after a stage: what changed is named."""

from __future__ import annotations

from pathlib import Path

from speedproof.judge.measure.placement import place_afresh
from speedproof.judge.worktree import snapshot


def _build_folder(tmp_path: Path) -> Path:
    binary = tmp_path / "out" / "bin" / "tool"
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"\x7fELF" + bytes(range(256)) * 64)
    binary.chmod(0o755)
    return binary


def test_a_file_replaced_by_a_copy_of_itself_moves_its_inode_and_is_a_change_unless_named(
    tmp_path: Path,
) -> None:
    binary = _build_folder(tmp_path)
    root = tmp_path / "out"
    before, named = snapshot.take(root), snapshot.take(root, [binary])

    place_afresh([binary])

    assert snapshot.changed(before, snapshot.take(root)) == ["bin/tool"]
    assert snapshot.changed(named, snapshot.again(named)) == []


def test_a_replaced_file_whose_bytes_changed_at_the_same_size_is_named(tmp_path: Path) -> None:
    binary = _build_folder(tmp_path)
    root = tmp_path / "out"
    before = snapshot.take(root, [binary])

    data = bytearray(binary.read_bytes())
    data[100] ^= 0xFF
    binary.write_bytes(bytes(data))

    assert snapshot.changed(before, snapshot.take(root, [binary])) == ["bin/tool"]


def test_a_replaced_file_that_lost_its_execute_bit_or_vanished_is_named(tmp_path: Path) -> None:
    binary = _build_folder(tmp_path)
    root = tmp_path / "out"
    before = snapshot.take(root, [binary])

    binary.chmod(0o644)
    assert snapshot.changed(before, snapshot.take(root, [binary])) == ["bin/tool"]
    binary.unlink()
    assert snapshot.changed(before, snapshot.take(root, [binary])) == ["bin/tool"]

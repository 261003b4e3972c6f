"""The two-pass patch guard: what a candidate patch may not touch, checked twice.

First pass, over the patch text before anything is applied: every name any header form could
carry, raw and with the first component stripped (`-p1`), must be relative, stay inside the
repository and be unprotected; binary patches, mode changes, symlinks, submodules and ed
scripts are refused outright. Second pass, after applying: git lists everything that changed
against the base commit (tracked, untracked and ignored) and each path meets the same rules,
because a tool can still be led somewhere the text did not say (GNU patch follows a tracked
symlink into `testdata/`).
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from speedproof.ground.errors import PatchError
from speedproof.ground.git import git_ok
from speedproof.judge.guard.changes import (
    REGULAR_MODES,
    SUBMODULE_MODE,
    SYMLINK_MODE,
    Change,
    list_changes,
)
from speedproof.judge.guard.code_guard import added_code_findings, describe
from speedproof.judge.guard.headers import HeaderName, Marker, read_headers
from speedproof.judge.guard.patch_names import strip_first
from speedproof.judge.guard.protected import ProtectedPaths, split_parts

ViolationRule = Literal[
    "protected-path",
    "absolute-path",
    "path-escape",
    "binary",
    "mode-change",
    "unusual-mode",
    "symlink",
    "submodule",
    "ed-script",
    "malformed-header",
    "no-headers",
    "empty",
    "ignored-file",
    "head-moved",
    # What the candidate's added code does (`code_guard`), second pass only.
    "harness-probe",
    "harness-plugin",
    "code-as-data",
    "unparsable-code",
]


@dataclass(frozen=True)
class Violation:
    """One reason to refuse: a stable `rule` code, the path concerned, and a sentence."""

    rule: ViolationRule
    path: str | None
    detail: str
    line: int | None = None  # in the patch text, for first-pass violations
    # The header form the path was read from (`diff --git`, `---`, ...), for first-pass
    # path violations; `detail` ends with `_from_header(header)`.
    header: str | None = None


@dataclass(frozen=True)
class GuardResult:
    passed: bool
    violations: tuple[Violation, ...]

    def __post_init__(self) -> None:
        if self.passed == bool(self.violations):
            raise ValueError("a guard result passes exactly when it has no violations")

    @classmethod
    def of(cls, violations: Iterable[Violation]) -> GuardResult:
        unique = tuple(dict.fromkeys(violations))
        return cls(passed=not unique, violations=unique)

    @property
    def rules(self) -> frozenset[str]:
        return frozenset(violation.rule for violation in self.violations)

    def summary(self) -> str:
        if self.passed:
            return "the patch touches nothing protected"
        return "; ".join(
            f"{v.rule}: {v.detail}" + (f" (patch line {v.line})" if v.line else "")
            for v in self.violations
        )

    def reasons(self) -> tuple[str, ...]:
        """`rule: detail` per finding, in order, each said once.

        One file's section names it in up to three headers (`diff --git`, `---`, `+++`), and
        each is a finding of its own: said as one reason naming every header that named it.
        """
        headers: dict[tuple[str, str | None, str], list[str]] = {}
        for v in self.violations:
            detail = v.detail.removesuffix(_from_header(v.header)) if v.header else v.detail
            forms = headers.setdefault((v.rule, v.path, detail), [])
            if v.header and v.header not in forms:
                forms.append(v.header)
        return tuple(
            f"{rule}: {detail}{_from_headers(forms)}"
            for (rule, _, detail), forms in headers.items()
        )

    def raise_if_failed(self) -> None:
        if not self.passed:
            raise PatchError(f"the patch was refused: {self.summary()}")


def check_path(path: str, protected: ProtectedPaths, line: int | None = None) -> list[Violation]:
    """The path rules both passes share: relative, inside the repository, not protected."""
    found: list[Violation] = []
    if path.startswith("/"):
        found.append(Violation("absolute-path", path, f"absolute path {path!r}", line))
    if ".." in split_parts(path):
        found.append(Violation("path-escape", path, f"{path!r} climbs out with `..`", line))
    why = protected.reason(path)
    if why is not None:
        found.append(Violation("protected-path", path, f"{path!r} is protected: {why}", line))
    return found


def check_patch(patch_text: str, protected: ProtectedPaths) -> GuardResult:
    """First pass: refuse a patch whose text names anything it may not touch."""
    if not patch_text.strip():
        return GuardResult.of([Violation("empty", None, "the patch is empty")])
    headers = read_headers(patch_text)
    violations: list[Violation] = []
    for header in headers.names:
        violations.extend(_check_name(header, protected))
    files = _FilesByLine(headers.names)
    for marker in headers.markers:
        violations.extend(_check_marker(marker, files.at(marker.line)))
    if not headers.names:
        detail = "no file header (`diff --git`, `---`/`+++`, `***`, `Index:`) in the patch"
        violations.append(Violation("no-headers", None, detail))
    return GuardResult.of(_one_per_rule_and_line(violations))


def _is_dev_null(name: str) -> bool:
    # `--- /dev/null\t1970-01-01 ...` (GNU diff) is no file, whatever follows the blank.
    return name.split(maxsplit=1)[:1] == ["/dev/null"]


def _check_name(header: HeaderName, protected: ProtectedPaths) -> list[Violation]:
    if _is_dev_null(header.name):
        return []
    found: list[Violation] = []
    # The -p1 reading first, so a report names `go.mod` rather than `a/go.mod`.
    for name in (strip_first(header.name), header.name):
        if name:
            found.extend(check_path(name, protected, header.line))
    return [
        Violation(v.rule, v.path, v.detail + _from_header(header.form), v.line, header.form)
        for v in found
    ]


def _from_header(form: str) -> str:
    return f", from the `{form}` header"


def _from_headers(forms: list[str]) -> str:
    """`, from the `diff --git`, `---` and `+++` headers`; "" for none, `_from_header` for one."""
    if len(forms) < 2:
        return "".join(_from_header(form) for form in forms)
    named = [f"`{form}`" for form in forms]
    return f", from the {', '.join(named[:-1])} and {named[-1]} headers"


class _FilesByLine:
    """The file a marker line belongs to: the shortest -p1 name of the last header above it."""

    def __init__(self, names: tuple[HeaderName, ...]) -> None:
        best: dict[int, str] = {}
        for header in names:
            if _is_dev_null(header.name):
                continue
            name = strip_first(header.name) or header.name
            if header.line not in best or len(name) < len(best[header.line]):
                best[header.line] = name
        self._lines = sorted(best)
        self._best = best

    def at(self, line: int) -> str | None:
        index = bisect.bisect_right(self._lines, line) - 1
        return self._best[self._lines[index]] if index >= 0 else None


def _check_marker(marker: Marker, path: str | None) -> list[Violation]:
    where = f" for {path!r}" if path else ""
    if marker.kind == "mode":
        return _check_mode(marker, path)
    messages: dict[str, tuple[ViolationRule, str]] = {
        "binary": ("binary", f"a binary patch{where} ({marker.form}); only text is judged"),
        "submodule": ("submodule", f"a submodule change{where} ({marker.value.strip()})"),
        "ed": ("ed-script", f"an ed or normal-diff command {marker.value!r}"),
        "malformed": ("malformed-header", f"an unreadable `{marker.form}` header"),
    }
    rule, detail = messages[marker.kind]
    return [Violation(rule, path, detail, marker.line)]


def _check_mode(marker: Marker, path: str | None) -> list[Violation]:
    try:
        mode = int(marker.value, 8)
    except ValueError:
        mode = -1
    found: list[Violation] = []
    if mode == SYMLINK_MODE:
        found.append(Violation("symlink", path, f"a symbolic link ({marker.form} 120000)"))
    elif mode == SUBMODULE_MODE:
        found.append(Violation("submodule", path, f"a submodule ({marker.form} 160000)"))
    if marker.form in ("old mode", "new mode"):
        found.append(
            Violation("mode-change", path, f"a mode change ({marker.form} {marker.value})")
        )
    elif mode not in (*REGULAR_MODES, SYMLINK_MODE, SUBMODULE_MODE):
        found.append(Violation("unusual-mode", path, f"mode {marker.value!r} ({marker.form})"))
    return [Violation(v.rule, v.path, v.detail, marker.line) for v in found]


def _one_per_rule_and_line(violations: list[Violation]) -> list[Violation]:
    # One header line yields many candidate names; one finding per rule and line is enough,
    # and the shortest name is the one a reader recognises (`go.mod`, not `go.mod b/go.mod`).
    kept: dict[tuple[str, int | None, str | None], Violation] = {}
    for v in violations:
        key = (v.rule, v.line, None if v.line is not None else v.path)
        held = kept.get(key)
        if held is None or len(v.path or "") < len(held.path or ""):
            kept[key] = v
    return list(kept.values())


def check_applied(worktree: Path, base_rev: str, protected: ProtectedPaths) -> GuardResult:
    """Second pass, right after applying and before anything builds: judge what really changed.

    Any ignored file is refused too: a fresh worktree has none, so one that exists was written
    by the patch where `git diff` would never show it (a stale `.pyc`, a generated file). Then
    the added lines of changed Python and Go files are read (`code_guard`): a harness probe, a
    harness plugin or code turned from data is refused with its file and line.
    """
    root = worktree.resolve()
    violations = _head_moved(root, base_rev)
    for change in list_changes(root, base_rev):
        violations.extend(_check_change(root, change, protected))
    for path, finding in added_code_findings(root, base_rev, protected):
        violations.append(Violation(finding.rule, path, describe(path, finding)))
    return GuardResult.of(violations)


def _head_moved(root: Path, base_rev: str) -> list[Violation]:
    head = git_ok(root, "rev-parse", "--verify", "HEAD").decode("ascii").strip()
    base = git_ok(root, "rev-parse", "--verify", f"{base_rev}^{{commit}}").decode("ascii").strip()
    if head == base:
        return []
    return [Violation("head-moved", None, f"HEAD is {head}, not the base {base}")]


def _check_change(root: Path, change: Change, protected: ProtectedPaths) -> list[Violation]:
    path = change.path
    found = check_path(path, protected)
    if change.ignored:
        found.append(Violation("ignored-file", path, f"{path!r} is ignored by git but was written"))
    if path.endswith("/"):
        found.append(Violation("submodule", path, f"{path!r} is a nested git repository"))
    found.extend(_check_modes(change))
    found.extend(_check_on_disk(root, path))
    return found


def _check_modes(change: Change) -> list[Violation]:
    path, old, new = change.path, change.old_mode, change.new_mode
    if old is None or new is None:
        return []
    found: list[Violation] = []
    if new == SYMLINK_MODE:
        found.append(Violation("symlink", path, f"{path!r} is a new or modified symbolic link"))
    if new == SUBMODULE_MODE:
        found.append(Violation("submodule", path, f"{path!r} is a submodule"))
    if old and new and old != new:
        found.append(Violation("mode-change", path, f"{path!r} changed mode {old:o} -> {new:o}"))
    return found


def _check_on_disk(root: Path, path: str) -> list[Violation]:
    """lstat the path (git may not report a type change as we expect) and keep it inside."""
    full = root / path
    found: list[Violation] = []
    if full.is_symlink():
        found.append(Violation("symlink", path, f"{path!r} is a symbolic link on disk"))
    parent = os.path.realpath(full.parent)
    if parent != str(root) and not parent.startswith(str(root) + os.sep):
        found.append(Violation("path-escape", path, f"{path!r} resolves outside the worktree"))
    return found

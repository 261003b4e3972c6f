"""The cached baseline answers only for the environment it ran in, and a broken one is refused.

Real venvs, real pytest, real worktrees under bubblewrap. A dependency is "installed" the way pip
leaves it: a module and a `.dist-info` folder in the venv's site-packages.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from speedproof.ground.errors import InfrastructureError
from speedproof.judge.tests.gate import gate_tests, run_baseline_tests
from speedproof.manifest import Manifest
from support.toolchain import _text, manifest, pair, toolchain, write_files

GEOM = {
    "geom/__init__.py": "",
    "geom/__main__.py": "print('ok')\n",
    "geom/core.py": _text(
        """
        def area(w, h):
            return w * h


        def perimeter(w, h):
            return 2 * (w + h)


        def length(x, y):
            import vecnorm  # an optional dependency, imported where it is used

            return vecnorm.norm(x, y)
        """
    ),
    "tests/test_geom.py": _text(
        """
        from geom.core import area, length, perimeter


        def test_area():
            assert area(2, 3) == 6


        def test_area_of_nothing():
            assert area(0, 3) == 0


        def test_perimeter():
            assert perimeter(2, 3) == 10


        def test_perimeter_of_a_square():
            assert perimeter(1, 1) == 4


        def test_area_of_a_square():
            assert area(4, 4) == 16


        def test_length():
            assert length(3, 4) == 5
        """
    ),
}
BROKEN_LENGTH = GEOM["geom/core.py"].replace("vecnorm.norm(x, y)", "vecnorm.norm(x, y) + 1")


def make_venv(where: Path) -> tuple[Path, Path]:
    """A venv without pip whose site-packages reaches this interpreter's (for pytest only)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "speedproof_pytest.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python, site


def pip_install_vecnorm(site: Path) -> None:
    """What `pip install vecnorm==1.0` leaves behind: the module and its metadata."""
    (site / "vecnorm.py").write_text("def norm(x, y):\n    return (x * x + y * y) ** 0.5\n")
    info = site / "vecnorm-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vecnorm\nVersion: 1.0\n")


def geom_manifest(interpreter: Path, tests: str = "") -> Manifest:
    target = f'name = "geom"\nlanguage = "python"\nmodule = "geom"\ninterpreter = "{interpreter}"'
    return manifest(target, f'runner = "pytest"\nargs = ["tests"]\n{tests}')


@pytest.mark.slow
def test_installing_a_dependency_retires_the_cached_baseline_so_a_break_it_hid_is_caught(
    tmp_path: Path,
) -> None:
    python, site = make_venv(tmp_path / "venv")
    p = pair(tmp_path, GEOM)
    m = geom_manifest(python)
    cache = tmp_path / "cache"
    before = run_baseline_tests(toolchain(m), p.baseline, revision=p.revision, cache_dir=cache)
    assert before.outcomes["tests/test_geom.py::test_length"] == "failed"

    pip_install_vecnorm(site)
    write_files(p.candidate.root, {"geom/core.py": BROKEN_LENGTH})
    result, base, _ = gate_tests(
        toolchain(m), p.baseline, p.candidate, revision=p.revision, cache_dir=cache
    )

    assert result.newly_failing == ("tests/test_geom.py::test_length",)
    assert not result.passed
    assert not base.cached
    assert base.outcomes["tests/test_geom.py::test_length"] == "passed"


BROKEN_SUITE = {
    **GEOM,
    "tests/test_needs_dep.py": "import vecnorm\n\n\ndef test_norm():\n    assert vecnorm\n",
    "tests/test_more.py": _text(
        """
        from geom.core import length


        def test_length_of_a_unit_step():
            assert length(1, 0) == 1
        """
    ),
}
PYTHON_TARGET = 'name = "geom"\nlanguage = "python"\nmodule = "geom"'


def test_a_baseline_with_a_collection_error_and_many_failures_is_refused_by_name(
    tmp_path: Path,
) -> None:
    p = pair(tmp_path, BROKEN_SUITE)
    m = manifest(PYTHON_TARGET, 'runner = "pytest"\nargs = ["tests"]')

    with pytest.raises(InfrastructureError) as raised:
        run_baseline_tests(toolchain(m), p.baseline, revision=p.revision, cache_dir=tmp_path / "c")

    said = str(raised.value)
    assert "1 failed to collect (tests/test_needs_dep.py)" in said
    assert "2 of 7 collected tests fail (more than 20%" in said
    assert "allow_failing_baseline = true" in said
    assert not list((tmp_path / "c").glob("baseline-tests/*.json"))


def test_a_failing_baseline_the_manifest_allows_is_judged_with_a_warning_first(
    tmp_path: Path,
) -> None:
    p = pair(tmp_path, BROKEN_SUITE)
    write_files(p.candidate.root, {"geom/core.py": GEOM["geom/core.py"].replace("w * h", "w + h")})
    m = manifest(
        PYTHON_TARGET, 'runner = "pytest"\nargs = ["tests"]\nallow_failing_baseline = true'
    )

    result, _, _ = gate_tests(
        toolchain(m), p.baseline, p.candidate, revision=p.revision, cache_dir=tmp_path / "c"
    )

    assert result.detail[0].startswith("WARNING: the baseline's own tests are broken")
    assert "tests/test_needs_dep.py" in result.detail[0]
    assert result.newly_failing == (
        "tests/test_geom.py::test_area",
        "tests/test_geom.py::test_area_of_a_square",
        "tests/test_geom.py::test_area_of_nothing",
    )

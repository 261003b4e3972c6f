"""Which language a project is written in, and what it says about itself."""

from __future__ import annotations

from pathlib import Path

from speedproof.init import detect_go, detect_python
from speedproof.init.model import Project, ProjectLanguage, UsageProblem


def detect_project(root: Path, language: ProjectLanguage | None = None) -> Project:
    """The project at `root`: Go when it has a go.mod, Python when it has a pyproject.toml,
    setup.py or setup.cfg (Go first when it has both, unless `language` says otherwise)."""
    found = {"go": detect_go.marker(root), "python": detect_python.marker(root)}
    order: list[ProjectLanguage] = ["go", "python"] if language is None else [language]
    for name in order:
        marker = found[name]
        if marker is None:
            continue
        if name == "go":
            return detect_go.detect(root, marker)
        return detect_python.detect(root, marker)
    wanted = "a go.mod" if language == "go" else "a pyproject.toml, setup.py or setup.cfg"
    if language is None:
        wanted = "a go.mod, pyproject.toml, setup.py or setup.cfg"
    raise UsageProblem(
        f"{root} is not a Go or Python project that speedproof init recognises: it has no "
        f"{wanted}; run init in the project's folder or give it as PATH"
    )

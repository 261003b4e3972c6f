"""Where the repository's own folders are, whichever folder under tests/ asks."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SRC = ROOT / "src"

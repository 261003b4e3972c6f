"""Reading `speedproof.toml` into a `Manifest`: TOML, the schema's checks, errors that name the
key and its line, and a relative interpreter anchored at the manifest's folder."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from speedproof.ground.errors import ManifestError
from speedproof.manifest import MANIFEST_NAME, KeyedError, Manifest
from speedproof.tomlpos import locate


class LoadedManifest(BaseModel):
    """A manifest plus where it lives: the file, and the target folder inside its repository."""

    model_config = ConfigDict(frozen=True)

    manifest: Manifest
    path: Path
    text: str

    @property
    def root(self) -> Path:
        return self.path.parent


def _describe(text: str, source: str, error: ValidationError) -> str:
    lines = [f"{source}: {error.error_count()} problem(s) in the manifest"]
    for item in error.errors():
        loc = [part for part in item["loc"] if isinstance(part, str | int)]
        message = item["msg"]
        keyed = item.get("ctx", {}).get("error")
        if isinstance(keyed, KeyedError):
            loc, message = [*loc, *keyed.loc], str(keyed)
        key = ".".join(str(part) for part in loc) or "(top level)"
        line = locate(text, loc)
        where = f"line {line}" if line else "no line"
        if item["type"] == "extra_forbidden":
            message = "unknown key"
        lines.append(f"  {source}:{line or '?'}: `{key}` ({where}): {message}")
    return "\n".join(lines)


def parse_manifest(text: str, source: str = MANIFEST_NAME) -> Manifest:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{source}: not valid TOML: {exc}") from exc
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        raise ManifestError(_describe(text, source, exc)) from exc


def anchor_interpreter(manifest: Manifest, folder: Path) -> Manifest:
    """The manifest with a relative `interpreter` path made absolute against `folder`.

    A bare name (`python3`) stays a PATH lookup. normpath, not resolve(): a venv's `bin/python`
    is a link, and the link's own path is what makes that Python start as the venv.
    """
    named = manifest.target.interpreter
    if named is None or "/" not in named or os.path.isabs(named):
        return manifest
    anchored = os.path.normpath(folder / named)
    target = manifest.target.model_copy(update={"interpreter": anchored})
    target._interpreter_written = named
    return manifest.model_copy(update={"target": target})


def load_manifest(path: Path) -> LoadedManifest:
    path = path.resolve()
    if path.is_dir():
        path = path / MANIFEST_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read the manifest: {exc.strerror}") from exc
    manifest = anchor_interpreter(parse_manifest(text, str(path)), path.parent)
    return LoadedManifest(manifest=manifest, path=path, text=text)

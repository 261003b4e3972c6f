"""TOML literals for the values init writes into a manifest.

TOML basic strings with the escapes TOML requires (quotes, backslashes, control characters), so
no project name, path or argument can break the file.
"""

from __future__ import annotations

import json


def toml_value(value: object) -> str:
    """A TOML literal for a string, a bool, a number or a list of them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    raise TypeError(f"no TOML form for {value!r}")


def _toml_string(text: str) -> str:
    # JSON's escapes are TOML's for ", \ and the C0 controls; TOML also forbids a raw DEL.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")

"""JSON schemas as a model is sent them: without what only repeats the field names."""

from __future__ import annotations

from typing import Any

__all__ = ["untitled"]

_VALUES = frozenset({"default", "const", "enum", "examples"})  # data, not schema


def untitled(schema: Any) -> Any:
    """``schema`` without pydantic's ``title`` keys: they repeat each parameter's name and
    are sent with every request (a parameter *named* ``title`` is kept)."""
    if isinstance(schema, list):
        return [untitled(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {
        key: value if key in _VALUES else untitled(value)
        for key, value in schema.items()
        if not (key == "title" and isinstance(value, str))
    }

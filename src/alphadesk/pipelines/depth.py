"""How deep a pipeline works: its own module, so a command line's ``--depth`` choices cost
no model import."""

from __future__ import annotations

from typing import Literal

__all__ = ["Depth"]

Depth = Literal["quick", "standard", "deep"]

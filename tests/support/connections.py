"""The SQLite connections a piece of code opens, for tests that prove it keeps one."""

from __future__ import annotations

import sqlite3

import pytest

__all__ = ["connections_opened"]


def connections_opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths of the SQLite connections opened from now on, appended as they open
    (until ``monkeypatch.undo()``)."""
    opened: list[str] = []
    real = sqlite3.connect

    def counting(*args: object, **kwargs: object) -> sqlite3.Connection:
        opened.append(str(args[0]))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sqlite3, "connect", counting)
    return opened

"""The SQLite conventions every store shares: WAL, short transactions, one file."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["create", "transaction"]


def create(path: Path, schema: str) -> None:
    """Create the file (and its folder) with ``schema``, in WAL mode so readers and one
    writer never block each other across tasks and processes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with transaction(path) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript(schema)


@contextmanager
def transaction(path: Path) -> Iterator[sqlite3.Connection]:
    """One short transaction: committed on success, rolled back on error, then closed."""
    db = sqlite3.connect(path, timeout=30)
    try:
        with db:
            yield db
    finally:
        db.close()

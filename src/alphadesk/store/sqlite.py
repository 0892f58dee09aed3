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
def transaction(path: Path, *, immediate: bool = False) -> Iterator[sqlite3.Connection]:
    """One short transaction: committed on success, rolled back on error, then closed.

    ``immediate`` takes the write lock at the start (``BEGIN IMMEDIATE``): use it when the
    transaction reads, then writes what it read (a balance check before an order), so two
    writers cannot both read the old state and one of them lose its update.
    """
    db = sqlite3.connect(path, timeout=30)
    # In WAL mode NORMAL syncs at checkpoints, not every commit: a killed process loses
    # nothing committed (only a power cut can drop the last commits), at half the cost.
    db.execute("PRAGMA synchronous=NORMAL")
    if immediate:
        db.isolation_level = None  # we issue BEGIN and COMMIT ourselves
    try:
        if immediate:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        else:
            with db:
                yield db
    finally:
        db.close()

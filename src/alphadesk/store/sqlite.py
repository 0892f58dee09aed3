"""The SQLite conventions every store shares: WAL, a busy timeout, retries on a locked
database, short transactions, one file, and corrupt caches moved aside and rebuilt.

Several processes may write one file at once (a screen, the API, a CLI run). SQLite
serialises writers; a writer that waits past the busy timeout, or that finds the database
locked while WAL mode is being set up, is retried here with exponential backoff and jitter,
so "database is locked" never reaches the user unless the file stays locked for minutes.
"""

from __future__ import annotations

import logging
import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from alphadesk.store.private import private_file, private_folder, tighten

__all__ = [
    "BUSY_TIMEOUT_S",
    "CorruptDatabase",
    "KeptConnection",
    "connect",
    "create",
    "is_locked",
    "quarantine",
    "retry_locked",
    "transaction",
    "write",
]

logger = logging.getLogger(__name__)
T = TypeVar("T")

BUSY_TIMEOUT_S = 30.0  # how long one statement waits for another process's write lock
_RETRIES = 8  # then retried with backoff: 0.05 s, 0.1 s ... about 13 s more in all
_BASE_DELAY_S = 0.05


class CorruptDatabase(sqlite3.DatabaseError):
    """A file that is not a readable SQLite database (garbage bytes, a truncated copy)."""


def is_locked(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite saying another connection holds the lock."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def retry_locked(
    action: Callable[[], T], *, retries: int = _RETRIES, sleep: Callable[[float], None] = time.sleep
) -> T:
    """``action()``, retried with exponential backoff and jitter while the database is
    locked; the last error propagates once ``retries`` are spent."""
    for attempt in range(retries + 1):
        try:
            return action()
        except sqlite3.OperationalError as exc:
            if not is_locked(exc) or attempt == retries:
                raise
            delay = _BASE_DELAY_S * 2**attempt * (0.5 + random.random())
            logger.debug("database locked (%s); retrying in %.2f s", exc, delay)
            sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover


def connect(path: Path, *, check_same_thread: bool = True) -> sqlite3.Connection:
    """A connection that waits for other writers (busy timeout) instead of failing."""
    db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, check_same_thread=check_same_thread)
    db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    # In WAL mode NORMAL syncs at checkpoints, not every commit: a killed process loses
    # nothing committed (only a power cut can drop the last commits), at half the cost.
    db.execute("PRAGMA synchronous=NORMAL")
    return db


_CHECKED: set[Path] = set()


def create(path: Path, schema: str, *, rebuild_if_corrupt: bool = False) -> None:
    """Create the file (and its folder) with ``schema``, in WAL mode so readers and one
    writer never block each other across tasks and processes.

    ``rebuild_if_corrupt`` (for caches, whose content can be fetched again): a file that
    is not a database or fails SQLite's integrity check is moved aside (``quarantine``)
    and an empty one is created in its place, with a warning in the log.
    """
    tighten(private_folder(path.parent))  # the data folder: chats, audit log, portfolio
    if rebuild_if_corrupt and path.resolve() not in _CHECKED:
        problem = _corruption(path)
        if problem is not None:
            moved = quarantine(path)
            logger.warning(
                "%s is corrupt (%s): moved it to %s and started an empty one", path, problem, moved
            )
        _CHECKED.add(path.resolve())

    def setup() -> None:
        with transaction(path) as db:
            if db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                db.execute("PRAGMA journal_mode=WAL")
            db.executescript(schema)

    private_file(path)  # before SQLite makes it: its -wal and -shm take the file's mode
    try:
        retry_locked(setup)
    except sqlite3.DatabaseError as exc:
        if is_locked(exc):
            raise
        raise CorruptDatabase(
            f"{path} is not a readable SQLite database ({exc}); move it aside (e.g. rename it "
            "to *.bak) and alphadesk starts a new one there"
        ) from exc
    for suffix in ("-wal", "-shm"):  # made looser by an older version
        tighten(path.with_name(path.name + suffix))


def _corruption(path: Path) -> str | None:
    """Why ``path`` is not a healthy SQLite file, or None (also for a missing file)."""
    if not path.exists() or path.stat().st_size == 0:
        return None
    try:
        db = connect(path)
        try:
            rows = retry_locked(lambda: db.execute("PRAGMA quick_check").fetchall())
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        if is_locked(exc):
            return None  # busy is not corrupt: another process is writing it
        return f"{type(exc).__name__}: {exc}"
    verdict = "; ".join(str(row[0]) for row in rows)
    return None if verdict == "ok" else verdict[:200]


def quarantine(path: Path) -> Path:
    """Rename ``path`` (and its WAL and shared-memory files) to ``<name>.corrupt-<UTC
    time>`` so nothing reads it again and a person can still inspect it. Returns the new
    path of the database file."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(target.with_name(target.name + suffix))
    path.rename(target)
    return target


@contextmanager
def transaction(path: Path, *, immediate: bool = False) -> Iterator[sqlite3.Connection]:
    """One short transaction: committed on success, rolled back on error, then closed.

    ``immediate`` takes the write lock at the start (``BEGIN IMMEDIATE``, retried with
    backoff while another writer holds it): use it when the transaction reads, then writes
    what it read (a balance check before an order), so two writers cannot both read the
    old state and one of them lose its update.
    """
    db = connect(path)
    if immediate:
        db.isolation_level = None  # we issue BEGIN and COMMIT ourselves
    try:
        if immediate:
            retry_locked(lambda: db.execute("BEGIN IMMEDIATE"))
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


def write(path: Path, statements: Callable[[sqlite3.Connection], T]) -> T:
    """Run ``statements`` in one write transaction (the lock taken at the start), the
    whole transaction retried with backoff while another process keeps the file locked."""

    def attempt() -> T:
        with transaction(path, immediate=True) as db:
            return statements(db)

    return retry_locked(attempt)


class KeptConnection:
    """One connection a store keeps open for all its short transactions, shared by its
    threads under a lock: opening a connection per transaction costs a file open, and
    closing the last one checkpoints the WAL, a sync to disk, every time. Commits are as
    durable as with a connection each (a killed process loses nothing committed). A child
    process (fork) opens its own rather than share its parent's."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self._pid = os.getpid()

    @contextmanager
    def transaction(self, *, immediate: bool = False) -> Iterator[sqlite3.Connection]:
        """One transaction, committed on success and rolled back on error; ``immediate``
        as in :func:`transaction`."""
        with self._lock:
            db = self._open()
            retry_locked(lambda: db.execute("BEGIN IMMEDIATE" if immediate else "BEGIN"))
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def write(self, statements: Callable[[sqlite3.Connection], T]) -> T:
        """As :func:`write`, through the kept connection."""

        def attempt() -> T:
            with self.transaction(immediate=True) as db:
                return statements(db)

        return retry_locked(attempt)

    def close(self) -> None:
        with self._lock:
            if self._db is not None and self._pid == os.getpid():
                self._db.close()
            self._db = None

    def _open(self) -> sqlite3.Connection:
        if self._pid != os.getpid():  # forked: the parent's connection is not ours to use
            self._db, self._pid = None, os.getpid()
        if self._db is None:
            self._db = connect(self.path, check_same_thread=False)
            self._db.isolation_level = None  # BEGIN and COMMIT issued here
        return self._db

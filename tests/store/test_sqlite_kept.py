"""The connection a store keeps: shared by threads, rolled back on error, never shared
with a forked child."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
from pathlib import Path

import pytest

from alphadesk.store import sqlite

_SCHEMA = "CREATE TABLE IF NOT EXISTS t (who TEXT, n INTEGER);"


def _kept(tmp_path: Path) -> sqlite.KeptConnection:
    path = tmp_path / "kept.sqlite"
    sqlite.create(path, _SCHEMA)
    return sqlite.KeptConnection(path)


def _rows(path: Path) -> list[tuple[str, int]]:
    db = sqlite3.connect(path)  # another connection: only what was committed
    try:
        return sorted(db.execute("SELECT who, n FROM t").fetchall())
    finally:
        db.close()


def _insert(kept: sqlite.KeptConnection, who: str, n: int) -> None:
    kept.write(lambda db: db.execute("INSERT INTO t VALUES (?, ?)", (who, n)))


def test_threads_share_the_connection_and_every_write_is_committed(tmp_path: Path) -> None:
    kept = _kept(tmp_path)
    threads = [
        threading.Thread(target=lambda w=w: [_insert(kept, f"t{w}", n) for n in range(50)])
        for w in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(_rows(kept.path)) == 200


def test_an_error_rolls_the_transaction_back_and_the_connection_goes_on(tmp_path: Path) -> None:
    kept = _kept(tmp_path)

    def half_then_fail(db: sqlite3.Connection) -> None:
        db.execute("INSERT INTO t VALUES ('lost', 1)")
        raise ValueError("bad row")

    with pytest.raises(ValueError, match="bad row"):
        kept.write(half_then_fail)
    _insert(kept, "kept", 2)
    assert _rows(kept.path) == [("kept", 2)]


def _child(kept: sqlite.KeptConnection) -> None:
    _insert(kept, "child", 1)


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork")
def test_a_forked_child_opens_its_own_connection(tmp_path: Path) -> None:
    kept = _kept(tmp_path)
    _insert(kept, "parent", 0)  # the parent's connection is open when the child forks
    child = multiprocessing.get_context("fork").Process(target=_child, args=(kept,))
    child.start()
    child.join(30)
    assert child.exitcode == 0
    _insert(kept, "parent", 2)
    assert _rows(kept.path) == [("child", 1), ("parent", 0), ("parent", 2)]

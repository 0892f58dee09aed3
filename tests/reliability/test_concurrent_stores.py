"""Several processes writing the same stores at once, and caches found corrupt.

Four real processes append runs (with their events and ledgers) and response-cache entries
to one SQLite file, the way a screen, the API and a CLI run share ``alphadesk.sqlite``:
nothing is lost, the file passes SQLite's integrity check, and no "database is locked"
reaches anyone. A cache file of garbage bytes or a truncated copy is moved aside and
rebuilt empty, with a warning.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from alphadesk.data.cache import DataCache
from alphadesk.llm.cache import ResponseCache
from alphadesk.llm.messages import AssistantMessage, ModelResponse, Usage
from alphadesk.store import RunStore
from alphadesk.store.sqlite import CorruptDatabase
from tests.support.writers import start_writers

pytestmark = pytest.mark.slow

WRITERS = 4
RUNS_EACH = 25
EVENTS_EACH = 12
ENTRIES_EACH = 40


def test_four_processes_write_one_store_and_lose_nothing(tmp_path: Path) -> None:
    path, go = tmp_path / "alphadesk.sqlite", tmp_path / "go"
    writers = start_writers(path, go, WRITERS, RUNS_EACH, EVENTS_EACH, ENTRIES_EACH)
    time.sleep(1.0)  # let them all import and wait at the line
    go.touch()
    for writer in writers:
        out, err = writer.communicate(timeout=180)
        assert writer.returncode == 0 and out.strip() == "done", err
        assert "locked" not in err.lower()

    store = RunStore(path)
    runs = store.recent(limit=10_000)
    assert len(runs) == WRITERS * RUNS_EACH
    assert {r.status for r in runs} == {"completed"}
    for run in runs:
        events = store.events(run.id)
        assert [e["agent"] for e in events] == [f"a{j}" for j in range(EVENTS_EACH)]
    assert len(ResponseCache(path)) == WRITERS * ENTRIES_EACH
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _response(text: str) -> ModelResponse:
    return ModelResponse(message=AssistantMessage(content=text), model="m", usage=Usage())


def _moved_aside(path: Path) -> list[Path]:
    """The database files set aside (their -wal and -shm companions go with them)."""
    moved = path.parent.glob(f"{path.name}.corrupt-*")
    return sorted(p for p in moved if not p.name.endswith(("-wal", "-shm")))


def test_a_cache_of_garbage_bytes_is_moved_aside_and_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "cache.sqlite"
    garbage = b"this is not a database, it is a shopping list\\n" * 200
    path.write_bytes(garbage)
    with caplog.at_level(logging.WARNING):
        cache = ResponseCache(path)
    assert len(cache) == 0
    cache.put("k", "m", _response("fresh"))
    assert cache.get("k") is not None
    (moved,) = _moved_aside(path)
    assert moved.read_bytes() == garbage  # kept for whoever wants to look
    assert any("corrupt" in r.getMessage() and str(moved) in r.getMessage() for r in caplog.records)


def test_a_truncated_cache_is_moved_aside_and_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    source = tmp_path / "full.sqlite"
    full = ResponseCache(source)
    for k in range(300):
        full.put(f"k{k}", "m", _response("x" * 500))
    with sqlite3.connect(source) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = source.read_bytes()
    path = tmp_path / "cache.sqlite"
    path.write_bytes(data[: len(data) // 2])  # a copy cut short
    with caplog.at_level(logging.WARNING):
        cache = ResponseCache(path)
    assert len(cache) == 0 and len(_moved_aside(path)) == 1
    assert any("corrupt" in r.getMessage() for r in caplog.records)


def test_a_corrupt_data_cache_is_moved_aside_and_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "market_cache.sqlite"
    path.write_bytes(b"\\x00\\xff garbage" * 500)
    cache = DataCache(path)
    with caplog.at_level(logging.WARNING):
        assert cache.clear() == 0
    assert len(_moved_aside(path)) == 1
    assert any("corrupt" in r.getMessage() for r in caplog.records)
    now = datetime.now(UTC)
    assert cache.get("missing", now, timedelta(minutes=1), now) is None
    with sqlite3.connect(path) as db:  # a healthy, empty cache in its place
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("SELECT COUNT(*) FROM entries").fetchone()[0] == 0


def test_a_corrupt_run_store_is_reported_with_how_to_fix_it(tmp_path: Path) -> None:
    path = tmp_path / "alphadesk.sqlite"
    path.write_bytes(b"garbage" * 1000)
    with pytest.raises(CorruptDatabase, match="move it aside"):
        RunStore(path)

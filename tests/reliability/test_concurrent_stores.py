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
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from alphadesk.data.cache import DataCache
from alphadesk.llm.cache import ResponseCache
from alphadesk.llm.messages import AssistantMessage, ModelResponse, Usage
from alphadesk.store import RunStore
from alphadesk.store.sqlite import CorruptDatabase

WRITERS = 4
RUNS_EACH = 25
EVENTS_EACH = 12
ENTRIES_EACH = 40

_WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from alphadesk.agent.events import RunFinished, RunStarted
    from alphadesk.llm.cache import ResponseCache
    from alphadesk.llm.messages import AssistantMessage, ModelResponse, Usage
    from alphadesk.store import RunStore
    from datetime import UTC, datetime, timedelta

    path, go, me = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    runs, events, entries = (int(v) for v in sys.argv[4:7])
    while not go.exists():  # start together, to collide as much as possible
        time.sleep(0.005)
    store, cache = RunStore(path), ResponseCache(path)
    as_of = datetime(2024, 11, 29, 21, tzinfo=UTC)
    for i in range(runs):
        run_id = store.start(kind="k", title=f"{me}-{i}", request={"i": i}, run_id=f"{me}-{i}")
        writer = store.writer(run_id)
        for j in range(events):  # a boundary every other event: several flushes per run
            if j % 2:
                writer.event(RunFinished(run_id=run_id, agent=f"a{j}", outcome="completed"))
            else:
                writer.event(RunStarted(run_id=run_id, agent=f"a{j}", model="m", as_of=as_of,
                                        tools=[]))
        writer.close()
        store.finish(run_id, status="completed", result={"i": i})
    for k in range(entries):
        response = ModelResponse(
            message=AssistantMessage(content=f"{me} {k}"), model="m", usage=Usage()
        )
        cache.put(f"{me}-{k}", "m", response)
    print("done")
    """
)


def test_four_processes_write_one_store_and_lose_nothing(tmp_path: Path) -> None:
    path, go = tmp_path / "alphadesk.sqlite", tmp_path / "go"
    writers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                _WRITER,
                str(path),
                str(go),
                f"w{n}",
                str(RUNS_EACH),
                str(EVENTS_EACH),
                str(ENTRIES_EACH),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(WRITERS)
    ]
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

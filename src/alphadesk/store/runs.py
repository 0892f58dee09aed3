"""The run store: every run, its events, its ledger, its outputs and artifacts, in SQLite."""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from alphadesk.store import sqlite

__all__ = ["Artifact", "RunNotFound", "RunRecord", "RunStore", "new_run_id"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    title TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    finished_at TEXT,
    as_of TEXT,
    model TEXT,
    request TEXT NOT NULL,
    result TEXT,
    error TEXT
);
CREATE INDEX IF NOT EXISTS runs_created ON runs(created_at);
CREATE TABLE IF NOT EXISTS run_events (
    run_id TEXT NOT NULL REFERENCES runs(id),
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS run_ledger (
    run_id TEXT NOT NULL REFERENCES runs(id),
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS run_artifacts (
    run_id TEXT NOT NULL REFERENCES runs(id),
    name TEXT NOT NULL,
    path TEXT NOT NULL,
    media_type TEXT NOT NULL,
    PRIMARY KEY (run_id, name)
);
"""


def new_run_id(now: datetime | None = None) -> str:
    """A sortable, readable run id: ``20210630-201500-3fa9c1``."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{secrets.token_hex(3)}"


class RunNotFound(KeyError):
    def __str__(self) -> str:
        return f"no run {self.args[0]!r}; `alphadesk runs list` shows the recorded runs"


class Artifact(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    path: Path
    media_type: str


class RunRecord(BaseModel):
    """One run as stored."""

    model_config = ConfigDict(frozen=True)

    id: str
    kind: str
    title: str
    status: str
    created_at: datetime
    finished_at: datetime | None
    as_of: datetime | None
    model: str | None
    request: dict[str, Any]
    result: dict[str, Any] | None
    error: str | None


class RunStore:
    """Runs in one SQLite file. Safe to share between tasks and processes (WAL, short
    transactions); every write is atomic, so an interrupted run never corrupts the store."""

    def __init__(self, path: Path) -> None:
        self.path = path
        sqlite.create(path, _SCHEMA)

    def _connect(self) -> AbstractContextManager[sqlite3.Connection]:
        return sqlite.transaction(self.path)

    # -- writing ----------------------------------------------------------------------------

    def start(
        self,
        *,
        kind: str,
        title: str,
        request: BaseModel | dict[str, Any],
        as_of: datetime | None = None,
        model: str | None = None,
        run_id: str | None = None,
    ) -> str:
        run_id = run_id or new_run_id()
        with self._connect() as db:
            db.execute(
                "INSERT INTO runs (id, kind, title, status, created_at, as_of, model, request)"
                " VALUES (?, ?, ?, 'running', ?, ?, ?, ?)",
                (run_id, kind, title, _now(), _iso(as_of), model, _dump(request)),
            )
        return run_id

    def append_event(self, run_id: str, event: BaseModel) -> None:
        body = event.model_dump(mode="json")
        with self._connect() as db:
            db.execute(
                "INSERT INTO run_events (run_id, seq, kind, body) VALUES (?, "
                "(SELECT COALESCE(MAX(seq), 0) + 1 FROM run_events WHERE run_id = ?), ?, ?)",
                (run_id, run_id, str(body.get("kind", type(event).__name__)), json.dumps(body)),
            )

    def record_ledger(self, run_id: str, entries: Sequence[BaseModel]) -> None:
        with self._connect() as db:
            db.execute("DELETE FROM run_ledger WHERE run_id = ?", (run_id,))
            db.executemany(
                "INSERT INTO run_ledger (run_id, seq, body) VALUES (?, ?, ?)",
                [(run_id, i, _dump(entry)) for i, entry in enumerate(entries)],
            )

    def add_artifact(self, run_id: str, name: str, path: Path, media_type: str) -> None:
        with self._connect() as db:
            db.execute(
                "INSERT OR REPLACE INTO run_artifacts (run_id, name, path, media_type)"
                " VALUES (?, ?, ?, ?)",
                (run_id, name, str(path), media_type),
            )

    def finish(
        self,
        run_id: str,
        *,
        status: str,
        result: BaseModel | dict[str, Any] | None = None,
        error: str | None = None,
    ) -> None:
        with self._connect() as db:
            updated = db.execute(
                "UPDATE runs SET status = ?, finished_at = ?, result = ?, error = ? WHERE id = ?",
                (status, _now(), None if result is None else _dump(result), error, run_id),
            ).rowcount
        if not updated:
            raise RunNotFound(run_id)

    # -- reading ----------------------------------------------------------------------------

    def recent(self, *, limit: int = 20, kind: str | None = None) -> list[RunRecord]:
        query = "SELECT * FROM runs" + (" WHERE kind = ?" if kind else "")
        query += " ORDER BY created_at DESC, id DESC LIMIT ?"
        params: tuple[Any, ...] = (kind, limit) if kind else (limit,)
        with self._connect() as db:
            db.row_factory = sqlite3.Row
            return [_record(row) for row in db.execute(query, params)]

    def get(self, run_id: str) -> RunRecord:
        with self._connect() as db:
            db.row_factory = sqlite3.Row
            row = db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise RunNotFound(run_id)
        return _record(row)

    def events(self, run_id: str) -> list[dict[str, Any]]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT body FROM run_events WHERE run_id = ? ORDER BY seq", (run_id,)
            ).fetchall()
        return [json.loads(body) for (body,) in rows]

    def ledger(self, run_id: str) -> list[dict[str, Any]]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT body FROM run_ledger WHERE run_id = ? ORDER BY seq", (run_id,)
            ).fetchall()
        return [json.loads(body) for (body,) in rows]

    def artifacts(self, run_id: str) -> list[Artifact]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT name, path, media_type FROM run_artifacts WHERE run_id = ? ORDER BY name",
                (run_id,),
            ).fetchall()
        return [Artifact(name=n, path=Path(p), media_type=m) for n, p, m in rows]


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _dump(value: BaseModel | dict[str, Any]) -> str:
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return json.dumps(value, default=str)


def _record(row: sqlite3.Row) -> RunRecord:
    data = dict(row)
    for key in ("request", "result"):
        data[key] = None if data[key] is None else json.loads(data[key])
    return RunRecord.model_validate(data)

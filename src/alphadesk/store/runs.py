"""The run store: every run, its events, its ledger, its outputs and artifacts, in SQLite."""

from __future__ import annotations

import json
import secrets
import shlex
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from alphadesk.store import sqlite
from alphadesk.store.owner import Owner, current_owner, owner_alive
from alphadesk.store.redact import env_secrets, redact, redact_json, redact_model

__all__ = [
    "Artifact",
    "RunBusy",
    "RunConflict",
    "RunNotFound",
    "RunRecord",
    "RunStore",
    "RunWriter",
    "new_run_id",
    "resume_command",
]

# Columns added after the first release: added to older files when they are opened.
_ADDED_COLUMNS = {
    "owner_pid": "INTEGER",
    "owner_host": "TEXT",
    "owner_started": "TEXT",
    "heartbeat_at": "TEXT",
    "workflow": "TEXT",
}
# Pipelines a run can be resumed from the command line with.
_RESUMABLE = ("csp", "desk")

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
    error TEXT,
    owner_pid INTEGER,
    owner_host TEXT,
    owner_started TEXT,
    heartbeat_at TEXT,
    workflow TEXT
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
CREATE TABLE IF NOT EXISTS run_calls (
    run_id TEXT NOT NULL REFERENCES runs(id),
    key TEXT NOT NULL,
    seq INTEGER NOT NULL,
    response TEXT NOT NULL,
    PRIMARY KEY (run_id, key, seq)
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


class RunConflict(RuntimeError):
    """The run cannot be resumed: it finished, or a live process is still running it."""


class RunBusy(RunConflict):
    """The run is still being run by a live process: it cannot be resumed from another."""


class Artifact(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    path: Path
    media_type: str


class RunRecord(BaseModel):
    """One run as stored. A run stored as ``running`` whose process is gone reads as
    ``interrupted``, with the reason and ``resume_command`` in ``error``."""

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
    owner_pid: int | None = None
    owner_host: str | None = None
    heartbeat_at: datetime | None = None
    workflow: str | None = None  # the Temporal workflow that runs it, for a durable run

    @property
    def resume_command(self) -> str | None:
        """The command that continues this run, when it is interrupted and resumable (a
        durable run continues by itself)."""
        if self.status != "interrupted" or self.workflow is not None:
            return None
        return resume_command(self)


def resume_command(run: RunRecord) -> str | None:
    """``alphadesk csp NVDA --as-of 2024-11-29 --resume <id>`` for a csp or desk run;
    ``alphadesk screen --resume <id>`` for a screen (it resumes its recorded request)."""
    if run.kind == "screen":
        return shlex.join(["alphadesk", "screen", "--resume", run.id])
    symbol = run.request.get("symbol")
    if run.kind not in _RESUMABLE or not isinstance(symbol, str):
        return None
    words = ["alphadesk", run.kind, symbol]
    if run.as_of is not None:
        words += ["--as-of", run.as_of.astimezone(UTC).date().isoformat()]
    if run.model and run.model != "rules" and "," not in run.model:
        words += ["--model", run.model]
    words += ["--resume", run.id]
    return shlex.join(words)


class RunStore:
    """Runs in one SQLite file. Safe to share between tasks and processes (WAL, a busy
    timeout, retries, short transactions); every write is atomic, so an interrupted run
    never corrupts the store. Text is redacted of API keys before it is stored."""

    def __init__(self, path: Path) -> None:
        self.path = path
        sqlite.create(path, _SCHEMA)
        self._kept = sqlite.KeptConnection(path)
        sqlite.retry_locked(self._migrate)

    def _migrate(self) -> None:
        with self._connect() as db:
            have = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
            for column, kind in _ADDED_COLUMNS.items():
                if column not in have:
                    db.execute(f"ALTER TABLE runs ADD COLUMN {column} {kind}")

    def _connect(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._kept.transaction()

    def close(self) -> None:
        """Close the connection the store keeps (it opens again when next used)."""
        self._kept.close()

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
        workflow: str | None = None,
    ) -> str:
        """Record a new run, owned by this process (see ``RunRecord.status``); ``workflow``
        names the Temporal workflow of a durable run."""
        run_id = run_id or new_run_id()
        me = current_owner()
        self._kept.write(
            lambda db: db.execute(
                "INSERT INTO runs (id, kind, title, status, created_at, as_of, model, request,"
                " owner_pid, owner_host, owner_started, heartbeat_at, workflow)"
                " VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    kind,
                    redact(title),
                    _now(),
                    _iso(as_of),
                    model,
                    _dump(request),
                    me.pid,
                    me.host,
                    me.started,
                    _now(),
                    workflow,
                ),
            ),
        )
        return run_id

    def claim(self, run_id: str, *, workflow: str | None = None) -> RunRecord:
        """Take over ``run_id`` to resume it: this process becomes its owner and it is
        ``running`` again. Raises RunNotFound; RunBusy while its owner still runs it;
        RunConflict when it already finished, or when it is a durable run and this is not
        a worker of its ``workflow``."""
        run = self.get(run_id)
        if run.workflow != workflow:
            raise RunConflict(
                f"run {run_id} runs as the Temporal workflow {run.workflow}: it goes on by "
                "itself when a worker polls (`alphadesk worker`), not with --resume"
                if run.workflow
                else f"run {run_id} is not a durable run: resume it with --resume"
            )
        if run.status not in ("running", "interrupted"):
            raise RunConflict(
                f"run {run_id} already finished ({run.status}): nothing to resume; "
                f"`alphadesk runs show {run_id}` shows it"
            )
        if run.status == "running" and run.owner_pid != current_owner().pid:
            raise RunBusy(
                f"run {run_id} is still running (process {run.owner_pid} on {run.owner_host});"
                " wait for it to finish, or stop that process first"
            )
        me = current_owner()
        self._kept.write(
            lambda db: db.execute(
                "UPDATE runs SET status = 'running', finished_at = NULL, error = NULL,"
                " owner_pid = ?, owner_host = ?, owner_started = ?, heartbeat_at = ?"
                " WHERE id = ?",
                (me.pid, me.host, me.started, _now(), run_id),
            ),
        )
        return self.get(run_id)

    def writer(self, run_id: str, *, resumable: bool = True) -> RunWriter:
        """The writer of this run's events, ledger and calls, in batches."""
        return RunWriter(self, run_id, resumable=resumable)

    def append_event(self, run_id: str, event: BaseModel) -> None:
        """Append one event in its own transaction (runs in progress use ``writer``)."""
        _, body = redact_model(event, env_secrets())
        self._kept.write(
            lambda db: db.execute(
                "INSERT INTO run_events (run_id, seq, kind, body) VALUES (?, "
                "(SELECT COALESCE(MAX(seq), 0) + 1 FROM run_events WHERE run_id = ?), ?, ?)",
                (run_id, run_id, _kind(event), body),
            ),
        )

    def record_ledger(self, run_id: str, entries: Sequence[BaseModel]) -> None:
        """Replace the run's whole ledger (runs in progress append with ``writer``)."""

        def replace(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM run_ledger WHERE run_id = ?", (run_id,))
            db.executemany(
                "INSERT INTO run_ledger (run_id, seq, body) VALUES (?, ?, ?)",
                [(run_id, i, _dump(entry)) for i, entry in enumerate(entries)],
            )

        self._kept.write(replace)

    def add_artifact(self, run_id: str, name: str, path: Path, media_type: str) -> None:
        self._kept.write(
            lambda db: db.execute(
                "INSERT OR REPLACE INTO run_artifacts (run_id, name, path, media_type)"
                " VALUES (?, ?, ?, ?)",
                (run_id, name, str(path), media_type),
            ),
        )

    def finish(
        self,
        run_id: str,
        *,
        status: str,
        result: BaseModel | dict[str, Any] | None = None,
        error: str | None = None,
        as_of: datetime | None = None,
    ) -> None:
        """Record how the run ended; ``as_of`` is the instant it was about, for a run that
        only knew it once it ran (an assistant question asked with no date)."""
        updated = self._kept.write(
            lambda db: (
                db.execute(
                    "UPDATE runs SET status = ?, finished_at = ?, result = ?, error = ?,"
                    " heartbeat_at = ?, as_of = COALESCE(as_of, ?) WHERE id = ?",
                    (
                        status,
                        _now(),
                        None if result is None else _dump(result),
                        None if error is None else redact(error),
                        _now(),
                        _iso(as_of),
                        run_id,
                    ),
                ).rowcount
            ),
        )
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

    def calls(self, run_id: str) -> list[tuple[str, str]]:
        """The run's recorded model responses as (request key, response JSON), in order."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT key, response FROM run_calls WHERE run_id = ? ORDER BY seq", (run_id,)
            ).fetchall()
        return [(key, response) for key, response in rows]

    def artifacts(self, run_id: str) -> list[Artifact]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT name, path, media_type FROM run_artifacts WHERE run_id = ? ORDER BY name",
                (run_id,),
            ).fetchall()
        return [Artifact(name=n, path=Path(p), media_type=m) for n, p, m in rows]


# Events that end a step of the run: everything buffered up to them is written at once. A
# model call's answer is one (its response, event and ledger entry together), so a resumed
# run never pays for an answered call again.
_BOUNDARIES = frozenset({"step_finished", "model_response"})
_MAX_BUFFER = 256
EventT = TypeVar("EventT", bound=BaseModel)
# A run that is not resumable writes at a boundary only this long after its last write:
# often enough to keep its heartbeat fresh and its progress visible with a slow model.
_UNRESUMABLE_FLUSH_S = 30.0


class RunWriter:
    """Writes one run in progress through the store's connection: events, ledger entries and
    model responses buffered and flushed in a single transaction at every step boundary (a
    step or a model call ending) and on ``close``. A crash loses at most the events after
    the last boundary. A run that is not ``resumable`` (asked again whole when stopped)
    writes at a boundary only every half minute, and on ``close``.

    Thread-safe (a lock around the buffer). Used after ``close`` (an event announcing
    the end, sent after the run was finished), it writes each event at once.
    """

    def __init__(self, store: RunStore, run_id: str, *, resumable: bool = True) -> None:
        self.store, self.run_id, self.resumable = store, run_id, resumable
        self._written_at = time.monotonic()
        self._lock = threading.Lock()
        self._events: list[tuple[str, str]] = []
        self._calls: list[tuple[str, str]] = []
        self._closed = False  # after close, each event is written as it comes
        self.secrets = env_secrets()  # read once per run: the environment is slow to scan
        with store._connect() as db:
            self._next_event = _count(db, "SELECT MAX(seq) FROM run_events", run_id) + 1
            self._ledger_written = _count(db, "SELECT COUNT(*) FROM run_ledger", run_id)
            self._next_call = _count(db, "SELECT MAX(seq) FROM run_calls", run_id) + 1
        self.flushes = 0

    @property
    def ledger_written(self) -> int:
        """How many ledger entries of this run are in the store."""
        return self._ledger_written

    def event(self, event: EventT, ledger: Sequence[BaseModel] = ()) -> EventT:
        """Buffer ``event`` without API keys, and write the buffer when it ends a step; with
        the ``ledger``, its entries not yet stored go in the same transaction (a completed
        model call's event and its entry). Returns the event as stored, for showing."""
        event, text = redact_model(event, self.secrets)
        kind = _kind(event)
        with self._lock:
            self._events.append((kind, text))
            entries = ledger[self._ledger_written :]
            if self._closed or len(self._events) >= _MAX_BUFFER or self._due(kind, entries):
                self._flush_locked(ledger=entries)
        return event

    def _due(self, kind: str, entries: Sequence[BaseModel]) -> bool:
        if not (entries or kind in _BOUNDARIES):
            return False
        return self.resumable or time.monotonic() - self._written_at >= _UNRESUMABLE_FLUSH_S

    def ledger(self, entries: Sequence[BaseModel]) -> None:
        """Write the entries of the run's ledger not yet stored (with buffered events)."""
        with self._lock:
            self._flush_locked(ledger=entries[self._ledger_written :])

    def call(self, key: str, response: BaseModel) -> None:
        """Record one completed model call's response under its request key: written with
        the call's event, which follows."""
        _, body = redact_model(response, self.secrets)
        with self._lock:
            self._calls.append((key, body))
            if self._closed:
                self._flush_locked(ledger=())

    def flush(self) -> None:
        with self._lock:
            self._flush_locked(ledger=())

    def close(self) -> None:
        """Write what is buffered; later events are written as each comes."""
        with self._lock:
            self._flush_locked(ledger=())
            self._closed = True

    def _flush_locked(self, ledger: Sequence[BaseModel]) -> None:
        if not self._events and not ledger and not self._calls:
            return
        events, first = list(self._events), self._next_event
        calls, first_call = list(self._calls), self._next_call
        entries = [redact_model(entry, self.secrets)[1] for entry in ledger]
        first_entry = self._ledger_written

        def statements(db: sqlite3.Connection) -> None:
            db.executemany(
                "INSERT INTO run_events (run_id, seq, kind, body) VALUES (?, ?, ?, ?)",
                [(self.run_id, first + i, k, b) for i, (k, b) in enumerate(events)],
            )
            db.executemany(
                "INSERT INTO run_ledger (run_id, seq, body) VALUES (?, ?, ?)",
                [(self.run_id, first_entry + i, e) for i, e in enumerate(entries)],
            )
            db.executemany(
                "INSERT INTO run_calls (run_id, key, seq, response) VALUES (?, ?, ?, ?)",
                [(self.run_id, k, first_call + i, r) for i, (k, r) in enumerate(calls)],
            )
            db.execute("UPDATE runs SET heartbeat_at = ? WHERE id = ?", (_now(), self.run_id))

        self._write(statements)
        self._events.clear()
        self._calls.clear()
        self._next_event += len(events)
        self._next_call += len(calls)
        self._ledger_written += len(entries)
        self._written_at = time.monotonic()
        self.flushes += 1

    def _write(self, statements: Callable[[sqlite3.Connection], object]) -> None:
        self.store._kept.write(statements)


def _kind(event: BaseModel) -> str:
    return str(getattr(event, "kind", type(event).__name__))


def _count(db: sqlite3.Connection, query: str, run_id: str) -> int:
    (value,) = db.execute(f"{query} WHERE run_id = ?", (run_id,)).fetchone()
    return int(value or 0)


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _dump(value: BaseModel | dict[str, Any]) -> str:
    if isinstance(value, BaseModel):
        return redact_model(value, env_secrets())[1]
    return json.dumps(redact_json(json.loads(json.dumps(value, default=str))))


def _record(row: sqlite3.Row) -> RunRecord:
    data = dict(row)
    for key in ("request", "result"):
        data[key] = None if data[key] is None else json.loads(data[key])
    started = data.pop("owner_started", None)
    record = RunRecord.model_validate(data)
    if record.status != "running" or record.owner_pid is None or record.owner_host is None:
        return record
    owner = Owner(pid=record.owner_pid, host=record.owner_host, started=started)
    if owner_alive(owner, record.heartbeat_at):
        return record
    interrupted = record.model_copy(update={"status": "interrupted"})
    why = f"its process ({record.owner_pid} on {record.owner_host}) ended before it finished"
    command = interrupted.resume_command
    hint = f"; continue it with `{command}`" if command else ""
    if record.workflow is not None:
        hint = f"; the Temporal workflow {record.workflow} carries on when a worker polls"
    return interrupted.model_copy(update={"error": why + hint})

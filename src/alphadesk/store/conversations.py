"""Chat sessions, their messages and the audit log of every tool call and answer, in SQLite.

A session is a conversation; each exchange is a user message and the assistant's answer,
both kept, so a later question sees the last exchanges as context. The audit log records
every tool call (arguments, outcome, seconds, a truncated result or the error) and every
answer, with the run that produced it, for a user to query afterwards. Every text is
redacted of API keys before it is stored (before it is cut: no key is left in halves).
"""

from __future__ import annotations

import secrets
import sqlite3
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from alphadesk.store import sqlite
from alphadesk.store.redact import env_secrets, redact

__all__ = [
    "AuditEntry",
    "ChatMessage",
    "ConversationStore",
    "SessionInfo",
    "SessionNotFound",
]

_DETAIL_CHARS = 4_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_sessions (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    title TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chat_messages (
    session_id TEXT NOT NULL REFERENCES chat_sessions(id),
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    at TEXT NOT NULL,
    run_id TEXT,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS chat_audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    run_id TEXT,
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    tool TEXT,
    arguments TEXT,
    outcome TEXT NOT NULL,
    detail TEXT NOT NULL,
    seconds REAL
);
CREATE INDEX IF NOT EXISTS chat_audit_session ON chat_audit(session_id, id);
CREATE INDEX IF NOT EXISTS chat_audit_tool ON chat_audit(tool, id);
"""

Role = Literal["user", "assistant"]
AuditKind = Literal["tool_call", "answer", "error"]


class SessionNotFound(KeyError):
    def __str__(self) -> str:
        return f"no chat session {self.args[0]!r}; `alphadesk chat sessions` lists them"


class SessionInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    created_at: datetime
    title: str
    messages: int


class ChatMessage(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Role
    content: str
    at: datetime
    run_id: str | None = None


class AuditEntry(BaseModel):
    """One audited event: a tool call, an answer or an error."""

    model_config = ConfigDict(frozen=True)

    id: int | None = None
    session_id: str
    run_id: str | None = None
    at: datetime
    kind: AuditKind
    tool: str | None = None
    arguments: str | None = None
    outcome: str
    detail: str
    seconds: float | None = None


class ConversationStore:
    """Sessions, messages and the audit log in one SQLite file (WAL, short transactions)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        sqlite.create(path, _SCHEMA)

    def _connect(self, *, immediate: bool = False) -> AbstractContextManager[sqlite3.Connection]:
        return sqlite.transaction(self.path, immediate=immediate)

    # -- sessions ---------------------------------------------------------------------------

    def new_session(self, title: str = "chat") -> str:
        session_id = f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
        with self._connect() as db:
            db.execute(
                "INSERT INTO chat_sessions (id, created_at, title) VALUES (?, ?, ?)",
                (session_id, _now(), _title(title)),
            )
        return session_id

    def ensure(self, session_id: str, title: str = "chat") -> None:
        """Create the session ``session_id`` if it does not exist."""
        with self._connect() as db:
            db.execute(
                "INSERT OR IGNORE INTO chat_sessions (id, created_at, title) VALUES (?, ?, ?)",
                (session_id, _now(), _title(title)),
            )

    def exists(self, session_id: str) -> bool:
        with self._connect() as db:
            row = db.execute("SELECT 1 FROM chat_sessions WHERE id = ?", (session_id,)).fetchone()
        return row is not None

    def sessions(self, limit: int = 20) -> list[SessionInfo]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT s.id, s.created_at, s.title, COUNT(m.seq) FROM chat_sessions s"
                " LEFT JOIN chat_messages m ON m.session_id = s.id"
                " GROUP BY s.id ORDER BY s.created_at DESC, s.id DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [
            SessionInfo(id=i, created_at=datetime.fromisoformat(c), title=t, messages=n)
            for i, c, t, n in rows
        ]

    # -- messages ---------------------------------------------------------------------------

    def append(self, session_id: str, role: Role, content: str, run_id: str | None = None) -> None:
        with self._connect(immediate=True) as db:
            if db.execute("SELECT 1 FROM chat_sessions WHERE id = ?", (session_id,)).fetchone():
                db.execute(
                    "INSERT INTO chat_messages (session_id, seq, role, content, at, run_id)"
                    " VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM chat_messages"
                    " WHERE session_id = ?), ?, ?, ?, ?)",
                    (session_id, session_id, role, redact(content), _now(), run_id),
                )
                return
        raise SessionNotFound(session_id)

    def history(self, session_id: str, exchanges: int = 10) -> list[ChatMessage]:
        """The last ``exchanges`` question-and-answer pairs, oldest first."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT role, content, at, run_id FROM chat_messages WHERE session_id = ?"
                " ORDER BY seq DESC LIMIT ?",
                (session_id, exchanges * 2),
            ).fetchall()
        messages = [
            ChatMessage(role=r, content=c, at=datetime.fromisoformat(a), run_id=run)
            for r, c, a, run in reversed(rows)
        ]
        while messages and messages[0].role != "user":  # start on a question
            messages.pop(0)
        return messages

    # -- audit ------------------------------------------------------------------------------

    def audit(self, entry: AuditEntry) -> None:
        secrets = env_secrets()
        arguments = None if entry.arguments is None else redact(entry.arguments, secrets)
        detail = redact(entry.detail, secrets)[:_DETAIL_CHARS]
        with self._connect() as db:
            db.execute(
                "INSERT INTO chat_audit (session_id, run_id, at, kind, tool, arguments, outcome,"
                " detail, seconds) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    entry.session_id,
                    entry.run_id,
                    entry.at.isoformat(),
                    entry.kind,
                    entry.tool,
                    arguments,
                    entry.outcome,
                    detail,
                    entry.seconds,
                ),
            )

    def audit_log(
        self,
        *,
        session_id: str | None = None,
        tool: str | None = None,
        kind: AuditKind | None = None,
        outcome: str | None = None,
        limit: int = 50,
    ) -> list[AuditEntry]:
        """Audited events, newest first, filtered by session, tool, kind or outcome."""
        clauses: list[str] = []
        params: list[Any] = []
        for column, value in (
            ("session_id", session_id),
            ("tool", tool),
            ("kind", kind),
            ("outcome", outcome),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        with self._connect() as db:
            db.row_factory = sqlite3.Row
            rows = db.execute(
                f"SELECT * FROM chat_audit{where} ORDER BY id DESC LIMIT ?", (*params, limit)
            ).fetchall()
        return [AuditEntry.model_validate(dict(row)) for row in rows]


def _title(text: str) -> str:
    return redact(text)[:80]


def _now() -> str:
    return datetime.now(UTC).isoformat()

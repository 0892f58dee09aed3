"""Chat sessions keep their last exchanges; the audit log answers queries."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from alphadesk.store.conversations import AuditEntry, ConversationStore, SessionNotFound


def test_history_holds_the_last_ten_exchanges_oldest_first(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path / "c.sqlite")
    session = store.new_session("demo")
    for i in range(12):
        store.append(session, "user", f"q{i}")
        store.append(session, "assistant", f"a{i}", run_id=f"run{i}")
    history = store.history(session)
    assert len(history) == 20
    assert [m.content for m in history[:2]] == ["q2", "a2"]
    assert history[-1].content == "a11" and history[-1].run_id == "run11"
    assert store.sessions()[0].messages == 24
    with pytest.raises(SessionNotFound):
        store.append("nope", "user", "hi")


def test_the_audit_log_filters_by_session_tool_and_outcome(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path / "c.sqlite")
    now = datetime.now(UTC)
    for session, tool, outcome in [
        ("s1", "get_positions", "ok"),
        ("s1", "get_news", "failed"),
        ("s2", "get_positions", "ok"),
    ]:
        store.audit(
            AuditEntry(
                session_id=session,
                at=now,
                kind="tool_call",
                tool=tool,
                arguments="{}",
                outcome=outcome,
                detail="x" * 10_000,
            )
        )
    assert len(store.audit_log(session_id="s1")) == 2
    assert [e.session_id for e in store.audit_log(tool="get_positions")] == ["s2", "s1"]
    failed = store.audit_log(outcome="failed")
    assert [e.tool for e in failed] == ["get_news"] and len(failed[0].detail) == 4_000


def test_every_text_is_redacted_before_it_is_stored(tmp_path: Path) -> None:
    key = "sk-ant-" + "ConversationKey9" * 2
    store = ConversationStore(tmp_path / "c.sqlite")
    # the key straddles the title's cut at 80 characters: no half of it is kept either
    session = store.new_session("x" * 70 + key)
    store.ensure("other", f"{key} as a title")
    store.append(session, "user", f"use {key} please")
    store.append(session, "assistant", f"I will not repeat {key}")
    store.audit(
        AuditEntry(session_id=session, at=datetime.now(UTC), kind="tool_call", tool="quote",
                   arguments=f'{{"api_key": "{key}"}}', outcome="ok", detail=f"echo {key}")
    )  # fmt: skip
    texts = [s.title for s in store.sessions()] + [m.content for m in store.history(session)]
    texts += [e.model_dump_json() for e in store.audit_log()]
    assert all(key[:12] not in text for text in texts)
    assert store.history(session)[0].content == "use [REDACTED] please"
    disk = b"".join(f.read_bytes() for f in tmp_path.iterdir())
    assert key[:12].encode() not in disk

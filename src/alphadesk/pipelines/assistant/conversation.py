"""A question's exchange in its conversation, and every call it made in the audit log."""

from __future__ import annotations

from datetime import UTC, datetime

from alphadesk.pipelines.assistant.models import ChatResult
from alphadesk.pipelines.assistant.question import CallRecord
from alphadesk.store import AuditEntry, ConversationStore

__all__ = ["record_exchange"]


def record_exchange(store: ConversationStore, result: ChatResult, calls: list[CallRecord]) -> None:
    """The question (and its answer, if it has one) into its session; every tool call and
    the answer, or the error, into the audit log. A session this store has not seen (a
    question answered on a durable worker with a store of its own) is opened here."""
    session_id, run_id = result.session_id, result.run_id
    store.ensure(session_id, result.question)
    store.append(session_id, "user", result.question, run_id)
    if result.decision == "completed":
        store.append(session_id, "assistant", result.answer, run_id)
    at = datetime.now(UTC)
    for call in calls:
        store.audit(
            AuditEntry(
                session_id=session_id,
                run_id=run_id,
                at=at,
                kind="tool_call",
                tool=call.tool,
                arguments=call.arguments,
                outcome="ok" if call.ok else "failed",
                detail=call.detail,
                seconds=call.seconds,
            )
        )
    flagged = result.numbers.unverified
    store.audit(
        AuditEntry(
            session_id=session_id,
            run_id=run_id,
            at=at,
            kind="answer" if result.decision == "completed" else "error",
            outcome=("error" if result.error else "flagged" if flagged else "ok"),
            detail=result.error
            or result.answer + (f"\n[unverified figures: {', '.join(flagged)}]" if flagged else ""),
            seconds=result.seconds,
        )
    )

"""Persistence in SQLite: runs, chat sessions and their audit log (the paper account keeps
its own tables through :mod:`alphadesk.store.sqlite`, in :mod:`alphadesk.portfolio`)."""

from alphadesk.store.conversations import AuditEntry, ChatMessage, ConversationStore
from alphadesk.store.runs import (
    Artifact,
    RunBusy,
    RunConflict,
    RunNotFound,
    RunRecord,
    RunStore,
    new_run_id,
)

__all__ = [
    "Artifact",
    "AuditEntry",
    "ChatMessage",
    "ConversationStore",
    "RunBusy",
    "RunConflict",
    "RunNotFound",
    "RunRecord",
    "RunStore",
    "new_run_id",
]

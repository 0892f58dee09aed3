"""Persistence in SQLite: runs, the paper portfolio, chat sessions and their audit log."""

from alphadesk.store.conversations import AuditEntry, ChatMessage, ConversationStore
from alphadesk.store.portfolio import (
    AccountNotFound,
    Contract,
    OrderRejected,
    OrderRequest,
    PaperPortfolio,
    Valuation,
)
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
    "AccountNotFound",
    "Artifact",
    "AuditEntry",
    "ChatMessage",
    "Contract",
    "ConversationStore",
    "OrderRejected",
    "OrderRequest",
    "PaperPortfolio",
    "RunBusy",
    "RunConflict",
    "RunNotFound",
    "RunRecord",
    "RunStore",
    "Valuation",
    "new_run_id",
]

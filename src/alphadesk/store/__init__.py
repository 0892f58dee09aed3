"""Persistence in SQLite: runs, chat sessions and their audit log (the paper account keeps
its own tables through :mod:`alphadesk.store.sqlite`, in :mod:`alphadesk.portfolio`).

The names below are imported when first read: a command that only redacts its logs
(:mod:`alphadesk.store.redact`) loads no store.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOMES = {
    "AuditEntry": "conversations",
    "ChatMessage": "conversations",
    "ConversationStore": "conversations",
    "Artifact": "runs",
    "RunBusy": "runs",
    "RunConflict": "runs",
    "RunNotFound": "runs",
    "RunRecord": "runs",
    "RunStore": "runs",
    "new_run_id": "runs",
}

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


def __getattr__(name: str) -> Any:
    """An exported name, imported from its module when first read."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

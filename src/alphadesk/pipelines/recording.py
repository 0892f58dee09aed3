"""Recording a pipeline run in the run store: its request, events, ledger and result."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from alphadesk.agent.events import BaseEvent
from alphadesk.agent.usage import UsageLedger
from alphadesk.store import RunStore

__all__ = ["RunRecorder"]


class RunRecorder:
    """Writes one run to the store as it happens, and forwards every event to ``on_event``.

    Events are written as they arrive, so a run that is interrupted still shows what it did.
    """

    def __init__(
        self,
        store: RunStore,
        *,
        kind: str,
        title: str,
        request: BaseModel | dict[str, Any],
        as_of: datetime,
        model: str,
        on_event: Callable[[BaseEvent], None] | None = None,
        run_id: str | None = None,
    ) -> None:
        self.store = store
        self.ledger = UsageLedger()
        self.run_id = store.start(
            kind=kind, title=title, request=request, as_of=as_of, model=model, run_id=run_id
        )
        self._on_event = on_event

    def emit(self, event: BaseEvent) -> None:
        self.store.append_event(self.run_id, event)
        if self._on_event is not None:
            self._on_event(event)

    def finish(
        self, *, status: str, result: BaseModel | dict[str, Any] | None, error: str | None = None
    ) -> None:
        self.store.record_ledger(self.run_id, self.ledger.entries)
        self.store.finish(self.run_id, status=status, result=result, error=error)

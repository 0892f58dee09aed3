"""Recording a pipeline run in the run store: its request, events, ledger and result."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from alphadesk.agent.events import BaseEvent, EventSink
from alphadesk.agent.usage import LedgerEntry, UsageLedger
from alphadesk.store import RunStore

__all__ = ["RunRecorder"]


class RunRecorder:
    """Writes one run to the store as it happens, and forwards every event to ``on_event``.

    Events are written as they arrive, so an interrupted run still shows what it did, and a
    resumed run continues the same record (its ledger includes the calls made before).
    """

    def __init__(
        self, store: RunStore, run_id: str, ledger: UsageLedger, on_event: EventSink | None
    ) -> None:
        self.store, self.run_id, self.ledger = store, run_id, ledger
        self._on_event = on_event

    @classmethod
    def start(
        cls,
        store: RunStore,
        *,
        kind: str,
        title: str,
        request: BaseModel | dict[str, Any],
        as_of: datetime,
        model: str,
        on_event: EventSink | None = None,
        run_id: str | None = None,
    ) -> RunRecorder:
        run_id = store.start(
            kind=kind, title=title, request=request, as_of=as_of, model=model, run_id=run_id
        )
        return cls(store, run_id, UsageLedger(), on_event)

    @classmethod
    def resume(cls, store: RunStore, run_id: str, on_event: EventSink | None = None) -> RunRecorder:
        """Continue recording ``run_id`` (raises RunNotFound when there is no such run)."""
        store.get(run_id)
        earlier = [LedgerEntry.model_validate(entry) for entry in store.ledger(run_id)]
        return cls(store, run_id, UsageLedger(entries=earlier), on_event)

    def emit(self, event: BaseEvent) -> None:
        self.store.append_event(self.run_id, event)
        if self._on_event is not None:
            self._on_event(event)

    def save(self, name: str, path: Path, media_type: str) -> None:
        self.store.add_artifact(self.run_id, name, path, media_type)

    def finish(
        self, *, status: str, result: BaseModel | dict[str, Any] | None, error: str | None = None
    ) -> None:
        self.store.record_ledger(self.run_id, self.ledger.entries)
        self.store.finish(self.run_id, status=status, result=result, error=error)

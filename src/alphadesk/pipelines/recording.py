"""Recording a pipeline run in the run store: its request, events, ledger and result."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from alphadesk.agent.events import BaseEvent, EventSink, TextDelta
from alphadesk.agent.usage import LedgerEntry, UsageLedger
from alphadesk.llm.journal import Journal
from alphadesk.llm.messages import ModelResponse
from alphadesk.store import RunStore

__all__ = ["RunRecorder"]


class RunRecorder:
    """Writes one run to the store as it happens, and forwards every event to ``on_event``.

    One connection per run (a ``RunWriter``): events are written in a batch at every step
    boundary (a step or a model call ending: the call's response and ledger entry with its
    event), so a run killed at any point still shows everything it finished. A resumed run
    continues the same record: its ledger includes the calls made before, and its
    ``journal`` answers the calls of an interrupted step again without paying for them
    twice. A run that is not ``resumable`` (asked again whole when stopped) is written in
    fewer, larger batches.
    """

    def __init__(
        self,
        store: RunStore,
        run_id: str,
        ledger: UsageLedger,
        on_event: EventSink | None,
        *,
        recorded_calls: list[tuple[str, str]] | None = None,
        resumable: bool = True,
    ) -> None:
        self.store, self.run_id, self.ledger = store, run_id, ledger
        self._on_event = on_event
        self._writer = store.writer(run_id, resumable=resumable)
        self.journal = Journal(recorded_calls or [], self._record_call)

    @classmethod
    def start(
        cls,
        store: RunStore,
        *,
        kind: str,
        title: str,
        request: BaseModel | dict[str, Any],
        as_of: datetime | None,
        model: str,
        on_event: EventSink | None = None,
        run_id: str | None = None,
        workflow: str | None = None,
        resumable: bool = True,
    ) -> RunRecorder:
        run_id = store.start(
            kind=kind,
            title=title,
            request=request,
            as_of=as_of,
            model=model,
            run_id=run_id,
            workflow=workflow,
        )
        return cls(store, run_id, UsageLedger(), on_event, resumable=resumable)

    @classmethod
    def resume(
        cls,
        store: RunStore,
        run_id: str,
        on_event: EventSink | None = None,
        *,
        workflow: str | None = None,
    ) -> RunRecorder:
        """Continue recording ``run_id``: this process takes it over (raises RunNotFound
        when there is no such run, RunBusy while another live process runs it, RunConflict
        when it finished or belongs to another ``workflow``)."""
        store.claim(run_id, workflow=workflow)
        earlier = [LedgerEntry.model_validate(entry) for entry in store.ledger(run_id)]
        return cls(
            store,
            run_id,
            UsageLedger(entries=earlier),
            on_event,
            recorded_calls=store.calls(run_id),
        )

    def emit(self, event: BaseEvent) -> None:
        if isinstance(event, TextDelta):  # shown as it streams; the whole answer is stored
            if self._on_event is not None:
                self._on_event(event)
            return
        completed = getattr(event, "kind", None) == "model_response"  # a call, its entry
        event = self._writer.event(event, self.ledger.entries if completed else ())
        if self._on_event is not None:  # shown as stored: without API keys
            self._on_event(event)

    def _record_call(self, key: str, response: ModelResponse) -> None:
        self._writer.call(key, response)

    def save(self, name: str, path: Path, media_type: str) -> None:
        self.store.add_artifact(self.run_id, name, path, media_type)

    def close(self) -> None:
        """Stop writing without finishing the run: it goes on in another recorder (a retried
        step resumes it from the store, with every call answered so far in its journal)."""
        self._writer.ledger(self.ledger.entries)
        self._writer.close()

    def finish(
        self, *, status: str, result: BaseModel | dict[str, Any] | None, error: str | None = None
    ) -> None:
        self.close()
        as_of = getattr(result, "as_of", None)  # the instant a run resolved as it ran
        self.store.finish(self.run_id, status=status, result=result, error=error, as_of=as_of)

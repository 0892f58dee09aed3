"""One question in flight: its state machine, its events, what it called and what it wrote.

Every event goes through :meth:`Session.emit`: recorded in the run store (all but the
token deltas, which the answer holds), forwarded to the front end, and read for the tool
calls the result and the audit log list. When the answer starts streaming during a tool
loop, the state moves from EXECUTING to RESPONDING.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from alphadesk.agent import RunScope
from alphadesk.agent import events as ev
from alphadesk.agents.assistant import Classification, RouterDecision
from alphadesk.llm.base import Model
from alphadesk.pipelines.assistant.events import NumbersChecked, State, StateChanged
from alphadesk.pipelines.assistant.models import (
    ChatRequest,
    ChatResult,
    NumberCheck,
    ToolCallRecord,
)
from alphadesk.pipelines.recording import RunRecorder
from alphadesk.store import AuditEntry, ChatMessage, ConversationStore

if TYPE_CHECKING:
    from alphadesk.pipelines.assistant.pipeline import AssistantPipeline

__all__ = ["Session"]

_ANSWERING = "answer"


@dataclass
class _Call:
    tool: str
    agent: str
    arguments: str
    ok: bool | None = None
    seconds: float | None = None
    detail: str = ""


@dataclass
class Session:
    """The state of one question while it is answered."""

    request: ChatRequest
    session_id: str
    recorder: RunRecorder
    history: list[ChatMessage]
    forward: ev.EventSink
    as_of: datetime = field(default_factory=lambda: datetime.now(UTC))
    as_of_note: str | None = None
    state: State = "IDLE"
    classification: Classification | None = None
    route: RouterDecision | None = None
    answer: str = ""
    error: str | None = None
    numbers: NumberCheck | None = None
    sources: list[str] = field(default_factory=list)
    calls: dict[str, _Call] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        if self.request.as_of is not None:
            self.as_of = self.request.as_of

    # -- events -----------------------------------------------------------------------------

    @property
    def ids(self) -> dict[str, str]:
        return {"run_id": self.recorder.run_id, "agent": "assistant"}

    def emit(self, event: ev.BaseEvent) -> None:
        if isinstance(event, ev.TextDelta):
            if event.agent == _ANSWERING and self.state == "EXECUTING":
                self.to("RESPONDING")
        else:
            self.recorder.emit(event)
            self._track(event)
        self.forward(event)

    def _track(self, event: ev.BaseEvent) -> None:
        if isinstance(event, ev.ToolStarted):
            self.calls[event.call_id] = _Call(event.tool, event.agent, event.arguments)
        elif isinstance(event, ev.ToolFinished) and event.call_id in self.calls:
            call = self.calls[event.call_id]
            call.ok, call.seconds, call.detail = True, event.seconds, event.result
        elif isinstance(event, ev.ToolFailed) and event.call_id in self.calls:
            call = self.calls[event.call_id]
            call.ok, call.detail = False, event.error

    def to(self, state: State, reason: str | None = None) -> None:
        if state == self.state:
            return
        previous, self.state = self.state, state
        self.emit(StateChanged(**self.ids, previous=previous, state=state, reason=reason))

    def fail(self, reason: str) -> None:
        self.error = reason
        self.to("ERROR", reason)

    def check(self, numbers: NumberCheck) -> None:
        self.numbers = numbers
        self.emit(NumbersChecked(**self.ids, check=numbers))

    def scope(self, pipeline: AssistantPipeline) -> RunScope:
        """What every agent run of this question shares: instant, run, ledger, budgets."""
        return RunScope(
            as_of=self.as_of,
            run_id=self.recorder.run_id,
            ledger=self.recorder.ledger,
            limits=pipeline.limits(self),
            on_event=self.emit,
        )

    # -- history ----------------------------------------------------------------------------

    @property
    def history_texts(self) -> list[str]:
        return [m.content for m in self.history]

    @property
    def history_text(self) -> str:
        if not self.history:
            return "(none)"
        return "\n".join(f"{m.role}: {m.content}" for m in self.history)

    # -- the end ----------------------------------------------------------------------------

    def result(self, models: dict[str, Model], now: float) -> ChatResult:
        records = [
            ToolCallRecord(
                tool=c.tool,
                arguments=c.arguments,
                ok=bool(c.ok),
                seconds=c.seconds,
                error=None if c.ok else c.detail or "did not finish",
            )
            for c in self.calls.values()
        ]
        return ChatResult(
            session_id=self.session_id,
            run_id=self.recorder.run_id,
            question=self.request.question,
            answer=self.answer,
            status="error" if self.error else "completed",
            error=self.error,
            as_of=self.as_of,
            as_of_note=self.as_of_note,
            classification=self.classification,
            route=self.route,
            tool_calls=records,
            failures=[f"{r.tool}: {r.error}" for r in records if not r.ok],
            numbers=self.numbers or NumberCheck(checked=0, traced=0),
            models={name: model.name for name, model in models.items()},
            usage=self.recorder.ledger.totals,
            seconds=round(now - self.started, 3),
        )

    def persist(self, store: ConversationStore, result: ChatResult) -> None:
        """The exchange into the session, every call and the answer into the audit log,
        and the run's end into the run store."""
        run_id = self.recorder.run_id
        store.append(self.session_id, "user", self.request.question, run_id)
        if result.status == "completed":
            store.append(self.session_id, "assistant", result.answer, run_id)
        at = datetime.now(UTC)
        for call in self.calls.values():
            store.audit(
                AuditEntry(
                    session_id=self.session_id,
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
                session_id=self.session_id,
                run_id=run_id,
                at=at,
                kind="answer" if result.status == "completed" else "error",
                outcome=("error" if result.error else "flagged" if flagged else "ok"),
                detail=result.error
                or result.answer
                + (f"\n[unverified figures: {', '.join(flagged)}]" if flagged else ""),
                seconds=result.seconds,
            )
        )
        self.recorder.finish(status=result.status, result=result, error=result.error)

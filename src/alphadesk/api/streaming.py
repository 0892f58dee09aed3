"""A pipeline run as server-sent events: one event per pipeline event (its ``kind`` as the
event name, its JSON as the data), then the result. The run is an asyncio task; when the
client goes away the stream is cancelled and so is the task."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, Literal, TypeVar

from pydantic import BaseModel
from starlette.background import BackgroundTask
from starlette.requests import Request

from alphadesk.agent.events import BaseEvent, EventSink
from alphadesk.api.context import thread_safe
from alphadesk.api.errors import ClientGone, from_exception
from alphadesk.serving.errors import error_json
from alphadesk.serving.slots import Slot
from alphadesk.store.redact import env_secrets, redact, redact_json

__all__ = ["SSE_RESPONSES", "Accepted", "release", "stream_run", "unless_gone"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

Produce = Callable[[EventSink], Coroutine[Any, Any, BaseModel | None]]

# For the OpenAPI page: what a streaming route answers.
SSE_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Server-sent events: `event:` is the event's kind (accepted, run_started, "
        "step_started, tool_started, tool_finished, debate_message, text_delta, state...), "
        "`data:` its JSON; the last is `result` (the run's result) or `error` "
        '(`{"error": {type, message, hint}}`).',
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    }
}


class Accepted(BaseModel):
    """The first event of a desk's stream, sent before the run starts: the request as the
    run will take it, and the run's id (``GET /runs/{run_id}`` once it has started)."""

    kind: Literal["accepted"] = "accepted"
    run_id: str
    pipeline: str
    request: dict[str, Any]


async def stream_run(
    produce: Produce,
    slot: Slot,
    *,
    result_event: str | None = "result",
    accepted: Accepted | None = None,
) -> AsyncIterator[bytes | dict[str, str]]:
    """Run ``produce(emit)`` as a task and yield its events as SSE messages.

    The events waiting when the stream wakes go out in one chunk: under load a worker's
    events arrive in bursts, and each write costs the server's loop more than encoding.

    Args:
        produce: Starts the pipeline with an event sink and returns its result.
        slot: The run slot, released when the run ends (or is cancelled).
        result_event: The event name of the final result; None when the pipeline's own
            last event already holds it.
        accepted: Sent first, as soon as the stream opens.
    """
    inbox, secrets = _Inbox(), _Secrets()  # the secrets read once per stream
    task: asyncio.Task[BaseModel | None] | None = None
    try:
        if accepted is not None:  # before anything else: the run starts once it is out
            yield _sse(accepted.kind, accepted, secrets)
        task = asyncio.create_task(produce(thread_safe(inbox.put)))
        task.add_done_callback(lambda _: inbox.close())
        while batch := await inbox.take():
            yield b"".join(_sse(_kind(event), event, secrets) for event in batch)
        try:
            result = task.result()
        except Exception as exc:  # a typed error event, the trace stays in the log
            error = from_exception(exc)
            if error.status >= 500:
                logger.error("streamed run failed", exc_info=exc)
            body = error_json(error.type, error.message, error.hint)
            yield {"event": "error", "data": json.dumps(body)}
            return
        if result_event is not None and result is not None:
            yield _sse(result_event, result, secrets)
    finally:
        if task is not None and not task.done():  # the client went away: stop the run
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        slot.release()


class _Inbox:
    """A run's events as they come, taken all at once."""

    def __init__(self) -> None:
        self._events: list[BaseEvent] = []
        self._ready = asyncio.Event()
        self._closed = False

    def put(self, event: BaseEvent) -> None:
        self._events.append(event)
        self._ready.set()

    def close(self) -> None:
        self._closed = True
        self._ready.set()

    async def take(self) -> list[BaseEvent]:
        """Every event waiting (at least one), or [] once the run has ended and all are out."""
        while not self._events and not self._closed:
            self._ready.clear()
            await self._ready.wait()
        events, self._events = self._events, []
        return events


async def unless_gone(request: Request, work: Coroutine[Any, Any, T]) -> T:
    """``work`` as a task, cancelled if the client goes away first (a JSON request's run
    stops like a stream's does).

    Raises:
        ClientGone: the client went away and ``work`` was cancelled.
    """
    task = asyncio.create_task(work)
    gone = False

    async def watch() -> None:
        nonlocal gone
        while (await request.receive())["type"] != "http.disconnect":
            pass
        gone = True
        task.cancel()

    watcher = asyncio.create_task(watch())
    try:
        return await task
    except asyncio.CancelledError:
        if not gone:
            raise  # the server itself is stopping
        raise ClientGone from None
    finally:
        watcher.cancel()


def release(slot: Slot) -> BackgroundTask:
    """The slot's release once the response is over: a stream cancelled before its first
    step never runs the generator's own cleanup (releasing twice is harmless)."""
    return BackgroundTask(slot.release)


class _Secrets:
    """The environment's credential values, and as they look inside a JSON string."""

    def __init__(self) -> None:
        self.values = env_secrets()
        escaped = {json.dumps(v, ensure_ascii=False)[1:-1] for v in self.values} - set(self.values)
        self.in_json = self.values + sorted(escaped, key=len, reverse=True)


def _sse(name: str, value: BaseModel, secrets: _Secrets) -> bytes:
    """One SSE message, redacted: whatever a tool or a model wrote, no key leaves. The
    model's JSON is searched as a whole (an event is mostly numbers and short strings);
    only when something in it is to hide is each string redacted, which keeps the JSON
    well-formed whatever the key's neighbours."""
    text = value.model_dump_json()
    if redact(text, secrets.in_json) != text:
        body = redact_json(value.model_dump(mode="json"), secrets.values)
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return f"event: {name}\r\ndata: {text}\r\n\r\n".encode()


def _kind(event: BaseEvent) -> str:
    return str(getattr(event, "kind", type(event).__name__))

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
from alphadesk.api.context import Slot, thread_safe
from alphadesk.api.errors import ClientGone, error_json, from_exception
from alphadesk.store.redact import env_secrets, redact_json

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
) -> AsyncIterator[dict[str, str]]:
    """Run ``produce(emit)`` as a task and yield its events as SSE messages.

    Args:
        produce: Starts the pipeline with an event sink and returns its result.
        slot: The run slot, released when the run ends (or is cancelled).
        result_event: The event name of the final result; None when the pipeline's own
            last event already holds it.
        accepted: Sent first, as soon as the stream opens.
    """
    queue: asyncio.Queue[BaseEvent | None] = asyncio.Queue()
    task = asyncio.create_task(produce(thread_safe(queue.put_nowait)))
    task.add_done_callback(lambda _: queue.put_nowait(None))
    secrets = env_secrets()  # read once per stream
    try:
        if accepted is not None:
            yield _message(accepted.kind, accepted, secrets)
        while (event := await queue.get()) is not None:
            yield _message(_kind(event), event, secrets)
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
            yield _message(result_event, result, secrets)
    finally:
        if not task.done():  # the client went away: stop the run, let it record why
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        slot.release()


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


def _message(name: str, value: BaseModel, secrets: list[str]) -> dict[str, str]:
    """One SSE message, redacted: whatever a tool or a model wrote, no key leaves."""
    body = redact_json(value.model_dump(mode="json"), secrets)
    return {"event": name, "data": json.dumps(body, separators=(",", ":"))}


def _kind(event: BaseEvent) -> str:
    return str(getattr(event, "kind", type(event).__name__))

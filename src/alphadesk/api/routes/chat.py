"""``/chat/v3``: one question to the assistant, answered as server-sent events."""

from __future__ import annotations

from functools import partial
from typing import Any

from fastapi import APIRouter, Request
from sse_starlette import EventSourceResponse

from alphadesk.agent.events import EventSink
from alphadesk.api.context import ApiContext
from alphadesk.api.errors import ApiError, ErrorBody
from alphadesk.api.models import ChatBody
from alphadesk.api.streaming import SSE_RESPONSES, release, stream_run
from alphadesk.pool.jobs import ask

__all__ = ["router"]

router = APIRouter(
    tags=["assistant"], responses={code: {"model": ErrorBody} for code in (422, 429)}
)


@router.post("/chat/v3", responses=SSE_RESPONSES, response_class=EventSourceResponse)
async def chat(body: ChatBody, request: Request) -> Any:
    """Ask the assistant: `state` events (PLANNING, EXECUTING, RESPONDING, IDLE or ERROR),
    `classified` and `routed`, tool progress (`tool_started`, `tool_finished`,
    `tool_failed`), the answer token by token (`text_delta`), `numbers_checked`, and
    `chat_finished` with the whole result (its `session_id` continues the conversation).
    Closing the connection cancels the question."""
    from alphadesk.pipelines.assistant import ChatRequest

    ctx: ApiContext = request.app.state.ctx
    as_of = None if body.as_of is None else ctx.as_of(body.as_of)
    model = ctx.model(body.model)
    try:
        question = ChatRequest(question=body.question, session_id=body.session_id, as_of=as_of)
    except ValueError as exc:
        raise ApiError(422, "validation_error", str(exc).splitlines()[0]) from None
    slot = ctx.slots.claim()

    async def produce(emit: EventSink) -> Any:
        return await ctx.runs.call(partial(ask, question=question, model=model), emit)

    # chat_finished already holds the result: no separate result event
    return EventSourceResponse(
        stream_run(produce, slot, result_event=None), ping=15, background=release(slot)
    )

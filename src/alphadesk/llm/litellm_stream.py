"""Streaming a LiteLLM completion: open it (so failures before the first chunk can be
retried), then relay its text deltas and build the whole response from the chunks."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from alphadesk.llm.base import ModelUnavailable, StreamItem
from alphadesk.llm.litellm_response import describe_error, parse_message, usage_of
from alphadesk.llm.messages import ModelResponse

__all__ = ["OpenStream", "open_stream", "relay"]


@dataclass
class OpenStream:
    """A completion stream whose first chunk has arrived."""

    model: str
    chunks: AsyncIterator[Any]
    first: Any
    messages: list[dict[str, Any]]
    started: float


async def open_stream(
    litellm: Any, model: str, kwargs: dict[str, Any], timeout_s: float
) -> OpenStream:
    """Start the request and wait for its first chunk (errors so far can be retried)."""
    started = time.monotonic()
    async with asyncio.timeout(timeout_s):
        response = await litellm.acompletion(**kwargs)
        chunks = response.__aiter__()
        first = await anext(chunks, None)
    return OpenStream(model, chunks, first, kwargs["messages"], started)


def _text(chunk: Any) -> str | None:
    choices = getattr(chunk, "choices", None)
    if not choices:
        return None
    content = getattr(getattr(choices[0], "delta", None), "content", None)
    return content if isinstance(content, str) and content else None


async def relay(litellm: Any, opened: OpenStream, timeout_s: float) -> AsyncIterator[StreamItem]:
    """Each text delta as it arrives (at most ``timeout_s`` apart), then the response."""
    received: list[Any] = []
    chunk = opened.first
    try:
        while chunk is not None:
            received.append(chunk)
            text = _text(chunk)
            if text:
                yield text
            async with asyncio.timeout(timeout_s):
                chunk = await anext(opened.chunks, None)
    except Exception as exc:
        raise ModelUnavailable(
            f"{opened.model} stream broke after it started ({describe_error(exc, timeout_s)}); "
            "ask again",
            model=opened.model,
        ) from exc
    full = litellm.stream_chunk_builder(received, messages=opened.messages) if received else None
    if full is None:
        raise ModelUnavailable(f"{opened.model} streamed no answer; ask again", model=opened.model)
    message, finish_reason = parse_message(full, opened.model)
    yield ModelResponse(
        message=message,
        model=opened.model,
        usage=usage_of(full, opened.model),
        finish_reason=finish_reason,
        latency_s=time.monotonic() - opened.started,
    )

"""Streaming a LiteLLM completion under two deadlines: the first chunk must come within the
first-token timeout (a server that says nothing is noticed early), the whole answer within
the total one. Opening is separate from relaying, so failures before the first chunk can
be retried; the response is built from the chunks at the end."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from alphadesk.llm.base import ModelUnavailable, ProviderTimeout, StreamItem
from alphadesk.llm.litellm_response import describe_error, parse_message, usage_of
from alphadesk.llm.messages import ModelResponse

__all__ = ["Deadlines", "OpenStream", "collect", "open_stream", "relay"]


@dataclass(frozen=True)
class Deadlines:
    """When the first chunk and the whole answer are due (``loop.time()`` instants)."""

    first_token_s: float
    total_s: float
    started: float

    @classmethod
    def start(cls, total_s: float, first_token_s: float | None) -> Deadlines:
        now = asyncio.get_running_loop().time()
        first = min(first_token_s, total_s) if first_token_s is not None else total_s
        return cls(first_token_s=first, total_s=total_s, started=now)

    @property
    def first_token_at(self) -> float:
        return self.started + self.first_token_s

    @property
    def total_at(self) -> float:
        return self.started + self.total_s


@dataclass
class OpenStream:
    """A completion stream whose first chunk has arrived."""

    model: str
    chunks: AsyncIterator[Any]
    first: Any
    messages: list[dict[str, Any]]
    started: float
    deadlines: Deadlines


async def open_stream(
    litellm: Any, model: str, kwargs: dict[str, Any], deadlines: Deadlines
) -> OpenStream:
    """Start the request and wait for its first chunk (errors so far can be retried).

    Raises ``ProviderTimeout(phase="first_token")`` when nothing came back in time.
    """
    started = time.monotonic()
    try:
        async with asyncio.timeout_at(deadlines.first_token_at):
            response = await litellm.acompletion(**kwargs)
            chunks = response.__aiter__()
            first = await anext(chunks, None)
    except TimeoutError:
        raise ProviderTimeout(
            f"{model} sent nothing within {deadlines.first_token_s:g}s (first-token timeout)",
            model=model,
            phase="first_token",
        ) from None
    return OpenStream(model, chunks, first, kwargs["messages"], started, deadlines)


def _text(chunk: Any) -> str | None:
    choices = getattr(chunk, "choices", None)
    if not choices:
        return None
    content = getattr(getattr(choices[0], "delta", None), "content", None)
    return content if isinstance(content, str) and content else None


class StreamTimedOut(ProviderTimeout):
    """The whole-answer deadline passed while the answer was still streaming."""

    def __init__(self, message: str, *, model: str | None = None, chunks: int = 0) -> None:
        super().__init__(message, model=model, phase="total")
        self.chunks = chunks


async def relay(litellm: Any, opened: OpenStream) -> AsyncIterator[StreamItem]:
    """Each text delta as it arrives, then the response; all before the total deadline.

    Raises ``StreamTimedOut`` past it (never retried: the same answer would take as long
    again) and ``ModelUnavailable`` when the stream breaks.
    """
    received: list[Any] = []
    chunk = opened.first
    try:
        async with asyncio.timeout_at(opened.deadlines.total_at):
            while chunk is not None:
                received.append(chunk)
                text = _text(chunk)
                if text:
                    yield text
                chunk = await anext(opened.chunks, None)
    except TimeoutError:
        raise StreamTimedOut(
            f"{opened.model} was still answering after {opened.deadlines.total_s:g}s "
            f"({len(received)} chunks): the total timeout ended it; lower max_tokens or "
            "raise timeout_s",
            model=opened.model,
            chunks=len(received),
        ) from None
    except Exception as exc:
        raise ModelUnavailable(
            f"{opened.model} stream broke after it started "
            f"({describe_error(exc, opened.deadlines.total_s)}); ask again",
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


async def collect(litellm: Any, opened: OpenStream) -> ModelResponse:
    """The whole response of a stream, its deltas dropped."""
    async for item in relay(litellm, opened):
        if isinstance(item, ModelResponse):
            return item
    raise ModelUnavailable(f"{opened.model} streamed no answer; ask again", model=opened.model)

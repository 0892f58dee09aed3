"""A run's stream on its own: ``accepted`` goes out before the run starts, the events come
in their order (those waiting when the stream wakes in one chunk), each the event's JSON,
and no key leaves in one, whatever characters it has or however it is wrapped."""

from __future__ import annotations

import asyncio
import json

import pytest
from sse_starlette.event import ensure_bytes

from alphadesk.agent.events import BaseEvent, EventSink, TextDelta, ToolStarted
from alphadesk.api.streaming import Accepted, stream_run
from alphadesk.serving.slots import RunSlots
from tests.support.live_api import parse_sse

KEYS = {
    "BROKER_API_KEY": 'quote"and\\backslash-0123456789',  # escaped inside a JSON string
    "FEED_TOKEN": "plain-feed-token-424242",
    "DESK_SECRET": "ünïcode-secret-value",
}


def _delta(text: str, turn: int = 1) -> TextDelta:
    return TextDelta(run_id="r1", agent="trader", turn=turn, text=text)


async def _stream(events: list[BaseEvent], **kwargs: object) -> tuple[list[bytes], list[str]]:
    """The chunks the stream yields, and what the run had done a moment after ``accepted``
    was out (as the server sends it)."""
    done: list[str] = []

    async def produce(emit: EventSink) -> None:
        done.append("started")
        for event in events:
            emit(event)
        await asyncio.sleep(0)

    slots = RunSlots(1)
    accepted = Accepted(run_id="r1", pipeline="desk", request={"symbol": "KO"})
    chunks: list[bytes] = []
    when_accepted: list[str] = []
    stream = stream_run(produce, slots.claim(), accepted=accepted, **kwargs)  # type: ignore[arg-type]
    async for message in stream:
        chunk = ensure_bytes(message, "\r\n")  # as the server writes it
        if not chunks:
            await asyncio.sleep(0.05)
            when_accepted = list(done)
        chunks.append(chunk)
    assert slots.active == 0
    return chunks, when_accepted


async def test_accepted_goes_out_before_the_run_starts_then_its_events_in_order() -> None:
    events: list[BaseEvent] = [_delta(f"part {i}") for i in range(5)]
    events.append(
        ToolStarted(run_id="r1", agent="trader", call_id="c1", tool="quote", arguments="{}")
    )
    chunks, when_accepted = await _stream(events, result_event=None)
    assert when_accepted == []
    assert len(chunks) == 2  # accepted; then all six, emitted in one step, in one chunk
    sse = list(parse_sse(b"".join(chunks).decode().splitlines()))
    assert [e.event for e in sse] == ["accepted"] + ["text_delta"] * 5 + ["tool_started"]
    assert sse[0].json()["run_id"] == "r1"
    assert [e.json()["text"] for e in sse[1:6]] == [f"part {i}" for i in range(5)]
    assert sse[6].json() == json.loads(events[-1].model_dump_json())


async def test_no_key_leaves_in_a_streamed_event(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    texts = [f"the key is {value}!" for value in KEYS.values()]
    texts.append("see https://example.test/q?api_key=abc123def&x=1")
    chunks, _ = await _stream([_delta(text) for text in texts], result_event=None)
    body = b"".join(chunks).decode()
    for value in KEYS.values():
        assert value not in body
        assert json.dumps(value)[1:-1] not in body  # nor as JSON writes it
    assert "abc123def" not in body
    streamed = [e.json()["text"] for e in parse_sse(body.splitlines()) if e.event != "accepted"]
    assert streamed == [
        "the key is [REDACTED]!",
        "the key is [REDACTED]!",
        "the key is [REDACTED]!",
        "see https://example.test/q?api_key=[REDACTED]&x=1",
    ]

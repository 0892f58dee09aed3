"""Token-by-token answers: LiteLLM streaming over real HTTP, the rules model's chunks, the
fallback for models that cannot stream, the cache, and the engine's TextDelta events."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from alphadesk.agent import Agent, RunScope, Toolset, tool
from alphadesk.agent.events import BaseEvent, TextDelta
from alphadesk.config import CacheMode
from alphadesk.llm.base import ModelUnavailable, StreamingModel, stream_response
from alphadesk.llm.cache import CachedModel, ResponseCache
from alphadesk.llm.litellm_model import Backoff, LiteLLMModel
from alphadesk.llm.messages import (
    Message,
    ModelResponse,
    RequestSettings,
    ToolSpec,
    UserMessage,
)
from alphadesk.llm.rules import RulesModel, RulesPolicy
from alphadesk.llm.testing import ScriptedModel, answer
from tests.support.openai_server import OpenAIServer, reply_status, reply_text, reply_tool_calls

pytestmark = pytest.mark.filterwarnings("ignore:.*using the `ReadOnly` qualifier:UserWarning")

AS_OF = datetime(2021, 6, 30, 20, tzinfo=UTC)
SETTINGS = RequestSettings(max_tokens=64)
HELLO: list[Message] = [UserMessage(content="Say hello.")]


async def _noop_sleep(_: float) -> None:
    return None


def _model(server: OpenAIServer, **kwargs: Any) -> LiteLLMModel:
    return LiteLLMModel(
        "openai/test-model",
        api_base=server.api_base,
        timeout_s=5.0,
        sleep=_noop_sleep,
        rng=random.Random(1),
        backoff=Backoff(base_s=0.01),
        **kwargs,
    )


async def _collect(stream: Any) -> tuple[list[tuple[float, str]], ModelResponse]:
    deltas: list[tuple[float, str]] = []
    final: ModelResponse | None = None
    async for item in stream:
        if isinstance(item, ModelResponse):
            final = item
        else:
            deltas.append((time.monotonic(), item))
    assert final is not None
    return deltas, final


async def test_litellm_streams_text_as_it_arrives(openai_server: OpenAIServer) -> None:
    text = "SPY closed at 250.71 and the VIX at 25.42 today"
    openai_server.script(reply_text(text, usage=(30, 11), chunk_delay_s=0.04))
    model = _model(openai_server)
    assert isinstance(model, StreamingModel)

    deltas, final = await _collect(model.stream(HELLO, [], SETTINGS))

    assert len(deltas) >= 8 and "".join(d for _, d in deltas) == text
    # Incremental: the first words arrived while the server was still sending the rest.
    assert deltas[-1][0] - deltas[0][0] > 0.2
    assert final.message.content == text and final.finish_reason == "stop"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (30, 11)
    assert openai_server.requests[0].stream


async def test_streamed_tool_calls_are_reassembled(openai_server: OpenAIServer) -> None:
    openai_server.script(reply_tool_calls([("get_quote", {"symbol": "MSFT", "days": 5})]))
    spec = ToolSpec(name="get_quote", description="Quote.", parameters={"type": "object"})
    deltas, final = await _collect(_model(openai_server).stream(HELLO, [spec], SETTINGS))
    assert deltas == []
    (call,) = final.message.tool_calls
    assert call.name == "get_quote" and json.loads(call.arguments) == {"symbol": "MSFT", "days": 5}


async def test_a_failure_before_the_first_chunk_is_retried(openai_server: OpenAIServer) -> None:
    openai_server.script(reply_status(429), reply_text("second try"))
    model = _model(openai_server)
    _, final = await _collect(model.stream(HELLO, [], SETTINGS))
    assert final.message.content == "second try" and model.stats.retries == 1
    openai_server.script(reply_status(503), reply_status(503))
    with pytest.raises(ModelUnavailable, match="no model answered"):
        await _collect(_model(openai_server, max_retries=1).stream(HELLO, [], SETTINGS))


class _PlainModel:
    """A model with no ``stream``: the fallback answers in one piece."""

    name = "plain"

    def supports(self, capability: str) -> bool:
        return capability == "tools"

    async def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        return ModelResponse(message=answer("all at once"), model=self.name)


async def test_models_without_stream_answer_in_one_piece() -> None:
    assert not isinstance(_PlainModel(), StreamingModel)
    deltas, final = await _collect(stream_response(_PlainModel(), HELLO, [], SETTINGS))
    assert [d for _, d in deltas] == ["all at once"] and final.message.content == "all at once"


async def test_the_rules_model_yields_its_answer_in_chunks() -> None:
    policy = RulesPolicy(plan=[], decide=lambda t: "one two three four five six seven")
    deltas, final = await _collect(RulesModel(policy).stream(HELLO, [], SETTINGS))
    assert [d for _, d in deltas] == ["one two three ", "four five six ", "seven"]
    assert final.message.content == "one two three four five six seven"


async def test_the_cache_records_a_stream_and_replays_it(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    recording = CachedModel(ScriptedModel(["cached words here"]), cache, CacheMode.RECORD)
    _, first = await _collect(recording.stream(HELLO, [], SETTINGS))
    replaying = CachedModel(ScriptedModel([]), cache, CacheMode.REPLAY)
    deltas, again = await _collect(replaying.stream(HELLO, [], SETTINGS))
    assert again.cached and again.message == first.message
    assert [d for _, d in deltas] == ["cached words here"]


@tool
async def get_quote(symbol: str) -> dict[str, float]:
    """A quote.

    Args:
        symbol: Ticker.
    """
    return {"MSFT": 250.0}


async def test_a_streaming_agent_emits_text_deltas_after_its_tools(
    openai_server: OpenAIServer,
) -> None:
    openai_server.script(
        reply_tool_calls([("get_quote", {"symbol": "MSFT"})]),
        reply_text("MSFT trades at 250 dollars."),
    )
    agent: Agent[None, str] = Agent(
        name="chat",
        instructions="Answer.",
        output_type=str,
        toolset=Toolset.of("q", [get_quote]),
        stream=True,
    )
    events: list[BaseEvent] = []
    result = await agent.run(
        _model(openai_server),
        "MSFT?",
        deps=None,
        scope=RunScope(as_of=AS_OF, on_event=events.append),
    )
    assert result.output == "MSFT trades at 250 dollars."
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert "".join(d.text for d in deltas) == result.output and len(deltas) > 1
    assert {d.turn for d in deltas} == {1}
    kinds = [e.kind for e in events]
    assert kinds.index("tool_finished") < kinds.index("text_delta")

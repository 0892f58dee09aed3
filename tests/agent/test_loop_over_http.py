"""A whole tool-calling run through LiteLLM against a real local OpenAI-compatible server."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from pydantic import BaseModel
from tests.support.openai_server import OpenAIServer, reply_status, reply_text, reply_tool_calls

from alphadesk.agent import Agent, RunScope, Toolset, tool
from alphadesk.llm.litellm_model import Backoff, LiteLLMModel

pytestmark = pytest.mark.slow

AS_OF = datetime(2021, 6, 30, 20, tzinfo=UTC)


class Answer(BaseModel):
    symbol: str
    doubled: int


@tool
async def double(n: int) -> dict[str, int]:
    """Double a number.

    Args:
        n: The number.
    """
    return {"value": 2 * n}


async def _no_sleep(_: float) -> None:
    return None


async def test_full_tool_calling_run_over_http(openai_server: OpenAIServer) -> None:
    openai_server.script(
        reply_tool_calls([("double", {"n": 21}), ("double", {"n": 1})]),
        reply_status(429, retry_after=1),
        reply_text('Done.\n```json\n{"symbol": "MSFT", "doubled": 42}\n```', usage=(50, 12)),
    )
    model = LiteLLMModel(
        "openai/test-model",
        api_base=openai_server.api_base,
        backoff=Backoff(base_s=0.01),
        sleep=_no_sleep,
    )
    agent: Agent[None, Answer] = Agent(
        name="doubler",
        instructions="Double things.",
        output_type=Answer,
        toolset=Toolset.of("t", [double]),
    )
    result = await agent.run(model, "Double 21 for MSFT", deps=None, scope=RunScope(as_of=AS_OF))

    assert result.output == Answer(symbol="MSFT", doubled=42)
    assert result.model == "openai/test-model"
    assert result.tool_calls == 2
    first, retried, last = openai_server.requests
    assert first.tool_names == ["double"]
    assert first.tools[0]["function"]["parameters"]["properties"]["n"]["type"] == "integer"
    assert retried.messages == last.messages  # the 429 was retried with the same request
    tool_replies = [m for m in last.messages if m["role"] == "tool"]
    assert [json.loads(m["content"]) for m in tool_replies] == [{"value": 42}, {"value": 2}]
    assert result.usage.requests == 2 and result.usage.input_tokens >= 50
    openai_server.assert_consumed()

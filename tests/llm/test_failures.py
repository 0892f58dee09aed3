"""Fast, honest failure against a real HTTP server that misbehaves on purpose.

Errors that will come back unchanged are raised at once, typed; deadlines end attempts that
would wait too long; every failed attempt is reported for the ledger; answers constrained
by ``response_format`` only where the server keeps tool calls, with a fallback when it
refuses the parameter.
"""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from alphadesk.agent import RunScope
from alphadesk.llm.attempts import FailedAttempt, reporting_attempts
from alphadesk.llm.base import EndpointUnreachable, ProviderTimeout, RequestRejected
from alphadesk.llm.litellm_model import LiteLLMModel
from alphadesk.llm.messages import RequestSettings, SystemMessage, ToolSpec, UserMessage
from tests.support.openai_server import (
    OpenAIServer,
    reply_hang,
    reply_status,
    reply_text,
)

pytestmark = pytest.mark.filterwarnings("ignore:.*using the `ReadOnly` qualifier:UserWarning")

CONVERSATION = [SystemMessage(content="You are terse."), UserMessage(content="Say hello.")]
SCHEMA = {"type": "object", "properties": {"verdict": {"type": "string", "maxLength": 20}}}
WITH_SCHEMA = RequestSettings(max_tokens=64, output_schema=SCHEMA, output_name="verdict")
TOOL = ToolSpec(name="get_quote", description="Last price.", parameters={"type": "object"})


class Sleeps(list[float]):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make(server: OpenAIServer, **kwargs: Any) -> tuple[LiteLLMModel, Sleeps]:
    sleeps = Sleeps()
    kwargs.setdefault("timeout_s", 30.0)
    model = LiteLLMModel(
        "openai/test-model",
        api_base=server.api_base,
        sleep=sleeps,
        rng=random.Random(3),
        **kwargs,
    )
    return model, sleeps


async def test_a_wrong_path_fails_at_the_pre_flight_check(openai_server: OpenAIServer) -> None:
    base = f"{openai_server.url}/v2"
    model = LiteLLMModel("openai/test-model", api_base=base)
    with pytest.raises(EndpointUnreachable) as caught:
        await model.request(CONVERSATION, [], RequestSettings())
    assert base in str(caught.value) and "404" in str(caught.value)
    assert openai_server.requests == []  # no completion was attempted


async def test_a_404_on_the_request_names_the_address_once(openai_server: OpenAIServer) -> None:
    openai_server.script(reply_status(404, "File Not Found"))  # as llama.cpp says it
    base = openai_server.api_base
    model = LiteLLMModel("openai/test-model", api_base=base, preflight=False)
    failed: list[FailedAttempt] = []
    with reporting_attempts(failed.append), pytest.raises(EndpointUnreachable) as caught:
        await model.request(CONVERSATION, [], RequestSettings())
    assert base in str(caught.value) and "is the server running" in str(caught.value)
    assert len(openai_server.requests) == 1  # not retried
    assert [a.error for a in failed] == ["EndpointUnreachable"]


async def test_an_unparseable_tool_call_in_the_history_is_not_retried(
    openai_server: OpenAIServer,
) -> None:
    openai_server.script(reply_status(500, "Failed to parse tool call arguments as JSON: x"))
    model, sleeps = make(openai_server)
    with pytest.raises(RequestRejected) as caught:
        await model.request(CONVERSATION, [], RequestSettings())
    assert caught.value.kind == "invalid_tool_call" and not caught.value.retryable
    assert len(openai_server.requests) == 1 and sleeps == []


async def test_a_context_overflow_is_not_retried(openai_server: OpenAIServer) -> None:
    openai_server.script(reply_status(400, "the request exceeds the available context size"))
    model, sleeps = make(openai_server)
    with pytest.raises(RequestRejected) as caught:
        await model.request(CONVERSATION, [], RequestSettings())
    assert caught.value.kind == "context_overflow"
    assert len(openai_server.requests) == 1 and sleeps == []


async def test_a_silent_server_fails_at_the_first_token_deadline(
    openai_server: OpenAIServer,
) -> None:
    openai_server.script(reply_hang(120), reply_hang(120))
    model, _ = make(openai_server, first_token_timeout_s=0.5, max_retries=3)
    failed: list[FailedAttempt] = []
    started = time.monotonic()
    with reporting_attempts(failed.append), pytest.raises(ProviderTimeout) as caught:
        await model.request(CONVERSATION, [], RequestSettings())
    assert caught.value.phase == "first_token"
    # Two attempts of 0.5 s, not one waiting out a 120 s silence: a margin of 60 s for a
    # busy machine.
    assert time.monotonic() - started < 60
    assert len(openai_server.requests) == 2  # a first-token timeout is retried once
    assert [a.error for a in failed] == ["ProviderTimeout", "ProviderTimeout"]


@pytest.mark.slow
async def test_a_rambling_answer_ends_at_the_total_deadline(openai_server: OpenAIServer) -> None:
    # The answer would stream for 100 s (2,000 chunks 0.05 s apart) against a 2 s deadline.
    openai_server.script(reply_text("warm up"), reply_text("word " * 2000, chunk_delay_s=0.05))
    model, _ = make(openai_server, timeout_s=2.0, first_token_timeout_s=5, max_retries=3)
    await model.request(CONVERSATION, [], RequestSettings(timeout_s=60))  # imports done
    failed: list[FailedAttempt] = []
    started = time.monotonic()
    with reporting_attempts(failed.append), pytest.raises(ProviderTimeout) as caught:
        await model.request(CONVERSATION, [], RequestSettings())
    assert caught.value.phase == "total"
    assert time.monotonic() - started < 50  # margin: 48 s beyond the deadline, half the answer
    assert len(openai_server.requests) == 2  # warm-up + one: it would take as long again
    assert len(failed) == 1 and failed[0].output_tokens > 5  # streamed chunks are counted


async def test_max_tokens_is_capped_by_the_setting(openai_server: OpenAIServer) -> None:
    openai_server.script(reply_text("a"), reply_text("b"))
    model, _ = make(openai_server, max_tokens=128)
    await model.request(CONVERSATION, [], RequestSettings(max_tokens=4096))
    await model.request(CONVERSATION, [], RequestSettings(max_tokens=64))
    assert [r.body["max_tokens"] for r in openai_server.requests] == [128, 64]


async def test_a_local_server_gets_the_schema_only_on_turns_without_tools(
    openai_server: OpenAIServer,
) -> None:
    openai_server.script(reply_text('{"verdict": "hold"}'), reply_text('{"verdict": "hold"}'))
    model, _ = make(openai_server)
    assert model.supports("json_schema")
    await model.request(CONVERSATION, [TOOL], WITH_SCHEMA)
    await model.request(CONVERSATION, [], WITH_SCHEMA)
    with_tools, without = openai_server.requests
    # Constrained decoding would make a tool call impossible on a llama.cpp-style server.
    assert with_tools.response_format is None
    assert without.response_format is not None
    assert without.response_format["json_schema"]["schema"] == SCHEMA
    # Both describe the schema in the same system prompt (the server's prompt cache holds).
    assert with_tools.messages[0] == without.messages[0]
    assert '"maxLength":20' in with_tools.messages[0]["content"]


async def test_always_sends_the_schema_even_with_tools(openai_server: OpenAIServer) -> None:
    openai_server.script(reply_text('{"verdict": "hold"}'))
    model, _ = make(openai_server, response_format="always")
    await model.request(CONVERSATION, [TOOL], WITH_SCHEMA)
    assert openai_server.requests[0].response_format is not None


async def test_a_refused_response_format_falls_back_to_instructions(
    openai_server: OpenAIServer,
) -> None:
    openai_server.script(
        reply_status(400, "response_format json_schema is not supported"),
        reply_text('{"verdict": "hold"}'),
    )
    model, sleeps = make(openai_server, response_format="always")
    response = await model.request(CONVERSATION, [], WITH_SCHEMA)
    assert response.message.content == '{"verdict": "hold"}'
    refused, answered = openai_server.requests
    assert refused.response_format is not None and answered.response_format is None
    assert sleeps == []
    assert "verdict" in answered.messages[0]["content"]  # the schema, in words
    assert not model.supports("json_schema")  # remembered: the loop now adds instructions


async def test_every_attempt_of_an_agent_is_in_its_ledger(openai_server: OpenAIServer) -> None:
    # A server error, then an answer: the run's ledger holds both calls, the failed one with
    # its error, and the request budget counts both.
    from datetime import UTC, datetime

    from pydantic import BaseModel

    from alphadesk.agent import Agent, UsageLedger

    class Verdict(BaseModel):
        verdict: str

    openai_server.script(
        reply_status(503, "the model is loading"), reply_text('```json\n{"verdict": "ok"}\n```')
    )
    model, _ = make(openai_server, max_retries=1)
    agent = Agent(name="judge", instructions="Answer.", output_type=Verdict)
    ledger = UsageLedger()
    run = agent.iter(
        model, "Verdict?", deps=None, scope=RunScope(as_of=datetime.now(UTC), ledger=ledger)
    )
    result = await run.result()
    assert result.output == Verdict(verdict="ok")
    failed, answered = ledger.entries
    assert failed.agent == answered.agent == "judge"
    assert failed.error is not None and "503" in failed.error and answered.error is None
    assert ledger.totals.requests == 2

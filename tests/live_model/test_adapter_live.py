"""LiteLLMModel against a real llama.cpp server: properties, not the quality of a tiny model.

An answer comes back; with ``response_format`` a schema-bound answer parses; a model that
never stops ends at its token cap or its time budget, typed; a stopped server and a wrong
path fail at once, naming the address and asking whether the server runs. How fast is not
asserted: the client's own timeouts bound each request.
"""

from __future__ import annotations

import json
import time

import pytest
from tests.live_model.conftest import LiveServer

from alphadesk.llm.attempts import FailedAttempt, reporting_attempts
from alphadesk.llm.base import EndpointUnreachable, ProviderTimeout
from alphadesk.llm.litellm_model import LiteLLMModel
from alphadesk.llm.messages import RequestSettings, SystemMessage, UserMessage
from alphadesk.llm.preflight import forget_checks

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:.*using the `ReadOnly` qualifier:UserWarning"),
]

HELLO = [SystemMessage(content="You are a helpful assistant."), UserMessage(content="hello")]
VERDICT = {
    "type": "object",
    "properties": {
        "intent": {"type": "string", "enum": ["greeting", "question", "other"]},
        "symbols": {"type": "array", "items": {"type": "string", "maxLength": 8}, "maxItems": 3},
    },
    "required": ["intent", "symbols"],
    "additionalProperties": False,
}


# Hang guards, not speeds: on two cores shared with other work the tiny models streamed
# 11-22 tokens in 30 s, so an answer of up to 96 tokens gets five minutes.
def _model(server: LiveServer, **kwargs: object) -> LiteLLMModel:
    return LiteLLMModel(
        server.model,
        api_base=server.api_base,
        api_key="sk-local-dummy",
        timeout_s=300,
        first_token_timeout_s=120,
        max_retries=0,
        **kwargs,  # type: ignore[arg-type]
    )


async def test_hello_answers(smollm2: LiveServer) -> None:
    response = await _model(smollm2).request(HELLO, [], RequestSettings(max_tokens=48))
    assert response.message.content and response.usage.output_tokens > 0


async def test_response_format_makes_a_tiny_models_answer_parse(smollm2: LiveServer) -> None:
    model = _model(smollm2)
    assert model.supports("json_schema")  # auto: a local OpenAI-compatible server
    settings = RequestSettings(max_tokens=96, output_schema=VERDICT, output_name="verdict")
    question = UserMessage(content="Classify this message: 'how is NVDA doing?'")
    response = await model.request([HELLO[0], question], [], settings)
    answer = json.loads(response.message.content or "")
    assert answer["intent"] in {"greeting", "question", "other"}
    assert isinstance(answer["symbols"], list)


async def test_a_model_that_never_stops_ends_at_its_token_cap(gemma3: LiveServer) -> None:
    response = await _model(gemma3, max_tokens=64).request(
        HELLO, [], RequestSettings(max_tokens=4096)
    )
    assert response.finish_reason == "length"
    assert response.usage.output_tokens <= 64


async def test_a_model_that_never_stops_ends_at_its_time_budget(gemma3: LiveServer) -> None:
    failed: list[FailedAttempt] = []
    # 20 s: the first token must come before the budget ends (it took seconds on a busy
    # machine), then the answer of 100,000 tokens streams until the budget cuts it.
    model = LiteLLMModel(
        gemma3.model, api_base=gemma3.api_base, timeout_s=20, first_token_timeout_s=20
    )
    started = time.monotonic()
    with reporting_attempts(failed.append), pytest.raises(ProviderTimeout) as caught:
        await model.request(HELLO, [], RequestSettings(max_tokens=100_000))
    # One attempt of 20 s (a total timeout is not retried), not minutes of answer; margin:
    # 60 s more for a busy machine.
    assert time.monotonic() - started < 20 + 60
    assert caught.value.phase == "total"
    assert [a.error for a in failed] == ["StreamTimedOut"]
    assert failed[0].output_tokens > 0  # what it streamed before the deadline is counted


async def test_a_stopped_server_fails_naming_the_address(smollm2: LiveServer) -> None:
    port = smollm2.port + 1 if smollm2.port < 65535 else smollm2.port - 1
    base = f"http://127.0.0.1:{port}/v1"  # nothing listens there
    forget_checks()
    with pytest.raises(EndpointUnreachable) as caught:
        await LiteLLMModel(smollm2.model, api_base=base).request(HELLO, [], RequestSettings())
    assert base in str(caught.value) and "is the server running" in str(caught.value)


async def test_a_wrong_path_fails_naming_the_address(smollm2: LiveServer) -> None:
    base = smollm2.api_base.replace("/v1", "/v2")
    forget_checks()
    with pytest.raises(EndpointUnreachable) as caught:
        await LiteLLMModel(smollm2.model, api_base=base).request(HELLO, [], RequestSettings())
    assert base in str(caught.value) and "404" in str(caught.value)

"""LiteLLMModel against a real OpenAI-compatible HTTP server on 127.0.0.1.

LiteLLM and its HTTP stack are real; only the provider is the local scripted server.
"""

from __future__ import annotations

import json
import random
import socket
import time
from typing import Any

import pytest

from alphadesk.llm.base import (
    AuthenticationFailed,
    EndpointUnreachable,
    Model,
    ModelUnavailable,
    RequestRejected,
)
from alphadesk.llm.litellm_model import Backoff, LiteLLMModel
from alphadesk.llm.messages import (
    AssistantMessage,
    ImagePart,
    Message,
    RequestSettings,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from tests.support.openai_server import (
    OpenAIServer,
    reply_hang,
    reply_malformed,
    reply_status,
    reply_text,
    reply_tool_calls,
)

# LiteLLM's provider types trip a pydantic warning on first use; alphadesk filters it once
# per process, but pytest resets warning filters between tests.
pytestmark = pytest.mark.filterwarnings("ignore:.*using the `ReadOnly` qualifier:UserWarning")

PNG = b"\x89PNG\r\n\x1a\n not really a chart"
SETTINGS = RequestSettings(max_tokens=256)
CONVERSATION: list[Message] = [
    SystemMessage(content="You are terse."),
    UserMessage(content="Say hello."),
]
QUOTE_TOOL = ToolSpec(
    name="get_quote",
    description="Last price of a symbol.",
    parameters={
        "type": "object",
        "properties": {"symbol": {"type": "string", "description": "Ticker."}},
        "required": ["symbol"],
    },
)


class Sleeps(list[float]):
    """An injected sleep that records the backoff delays instead of waiting."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make_model(
    server: OpenAIServer, model: str = "openai/test-model", **kwargs: Any
) -> tuple[LiteLLMModel, Sleeps]:
    sleeps = Sleeps()
    kwargs.setdefault("timeout_s", 5.0)
    built = LiteLLMModel(
        model, api_base=server.api_base, sleep=sleeps, rng=random.Random(7), **kwargs
    )
    return built, sleeps


async def test_plain_completion_maps_text_usage_and_request(openai_server: OpenAIServer) -> None:
    openai_server.script(reply_text("hello", usage=(12, 7)))
    model, sleeps = make_model(openai_server)
    assert isinstance(model, Model)

    response = await model.request(CONVERSATION, [], SETTINGS)

    assert response.message == AssistantMessage(content="hello")
    assert response.model == "openai/test-model"
    assert response.finish_reason == "stop"
    assert (response.usage.requests, response.usage.input_tokens) == (1, 12)
    assert response.usage.output_tokens == 7
    assert response.usage.cost_usd == 0.0  # LiteLLM has no price for test-model
    assert response.latency_s > 0 and not response.cached
    (sent,) = openai_server.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.model == "test-model"
    assert sent.messages == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Say hello."},
    ]
    assert sent.body["max_tokens"] == 256
    assert "tools" not in sent.body and sent.response_format is None
    assert sent.api_key  # a placeholder: local servers need no key, the client needs one
    assert sleeps == [] and model.stats.attempts == 1


async def test_known_model_is_priced(openai_server: OpenAIServer) -> None:
    openai_server.script(reply_text("hi", usage=(1000, 1000)))
    model, _ = make_model(openai_server, "openai/gpt-4o")
    response = await model.request(CONVERSATION, [], SETTINGS)
    assert 0 < response.usage.cost_usd < 1


async def test_tool_round_trip(openai_server: OpenAIServer) -> None:
    openai_server.script(
        reply_tool_calls([("get_quote", {"symbol": "MSFT"}), ("get_quote", {"symbol": "AAPL"})]),
        reply_text("MSFT 250, AAPL 130"),
    )
    model, _ = make_model(openai_server)

    first = await model.request(CONVERSATION, [QUOTE_TOOL], SETTINGS)

    assert first.finish_reason == "tool_calls"
    assert first.message.tool_calls == [
        ToolCall(id="call_1", name="get_quote", arguments='{"symbol": "MSFT"}'),
        ToolCall(id="call_2", name="get_quote", arguments='{"symbol": "AAPL"}'),
    ]
    assert openai_server.requests[0].tools == [
        {
            "type": "function",
            "function": {
                "name": "get_quote",
                "description": "Last price of a symbol.",
                "parameters": QUOTE_TOOL.parameters,
            },
        }
    ]

    history = [
        *CONVERSATION,
        first.message,
        ToolMessage(tool_call_id="call_1", name="get_quote", content='{"price": 250}'),
        ToolMessage(tool_call_id="call_2", name="get_quote", content='{"price": 130}'),
    ]
    second = await model.request(history, [QUOTE_TOOL], SETTINGS)

    assert second.message.content == "MSFT 250, AAPL 130"
    sent = openai_server.requests[1].messages
    assert sent[2]["role"] == "assistant"
    assert [c["id"] for c in sent[2]["tool_calls"]] == ["call_1", "call_2"]
    assert sent[2]["tool_calls"][0]["function"] == {
        "name": "get_quote",
        "arguments": '{"symbol": "MSFT"}',
    }
    assert [(m["role"], m["tool_call_id"], m["content"]) for m in sent[3:]] == [
        ("tool", "call_1", '{"price": 250}'),
        ("tool", "call_2", '{"price": 130}'),
    ]


async def test_rate_limit_is_retried_after_backoff(openai_server: OpenAIServer) -> None:
    openai_server.script(reply_status(429, retry_after=1), reply_text("made it"))
    model, sleeps = make_model(openai_server, backoff=Backoff(base_s=0.01))

    response = await model.request(CONVERSATION, [], SETTINGS)

    assert response.message.content == "made it"
    assert len(openai_server.requests) == 2
    assert model.stats.attempts == 2 and model.stats.retries == 1
    assert sleeps == [1.0]  # Retry-After beats the 10 ms backoff


async def test_backoff_grows_with_jitter_on_server_errors(openai_server: OpenAIServer) -> None:
    openai_server.script(reply_status(500), reply_status(503), reply_malformed(), reply_text("ok"))
    model, sleeps = make_model(openai_server, max_retries=3, backoff=Backoff(base_s=1.0))

    response = await model.request(CONVERSATION, [], SETTINGS)

    assert response.message.content == "ok"
    assert model.stats.retries == 3 and len(openai_server.requests) == 4
    assert [round(s) for s in sleeps] != [0, 0, 0]
    for retry, delay in enumerate(sleeps):
        assert 0.5 * 2**retry <= delay <= 2**retry  # base * 2**retry, minus up to half


async def test_retries_exhausted_without_fallback(openai_server: OpenAIServer) -> None:
    openai_server.script(*[reply_status(429)] * 3)
    model, sleeps = make_model(openai_server, max_retries=2, backoff=Backoff(base_s=0.01))

    with pytest.raises(ModelUnavailable) as caught:
        await model.request(CONVERSATION, [], SETTINGS)

    message = str(caught.value)
    assert "openai/test-model attempt 1: HTTP 429" in message
    assert "openai/test-model attempt 3: HTTP 429" in message
    assert len(openai_server.requests) == 3 and len(sleeps) == 2
    assert caught.value.retryable and caught.value.model == "openai/test-model"


async def test_authentication_failure_is_not_retried_nor_fallen_back(
    openai_server: OpenAIServer,
) -> None:
    openai_server.script(reply_status(401, "Incorrect API key provided"))
    openai_server.script(reply_text("should not be asked"), model="backup-model")
    model, sleeps = make_model(openai_server, fallbacks=["openai/backup-model"])

    with pytest.raises(AuthenticationFailed) as caught:
        await model.request(CONVERSATION, [], SETTINGS)

    assert "OPENAI_API_KEY" in str(caught.value)
    assert "HTTP 401" in str(caught.value)
    assert "Incorrect API key provided" in str(caught.value)
    assert len(openai_server.requests) == 1
    assert sleeps == [] and model.stats.retries == 0 and model.stats.fallbacks == 0
    assert openai_server.remaining == 1


async def test_rejected_key_from_the_environment_is_named(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    openai_server.script(reply_status(401))
    model, _ = make_model(openai_server)
    with pytest.raises(AuthenticationFailed, match="OPENAI_API_KEY is set but was rejected"):
        await model.request(CONVERSATION, [], SETTINGS)
    assert openai_server.requests[0].api_key == "sk-wrong"


async def test_fallback_with_bad_credentials_is_an_auth_error_too(
    openai_server: OpenAIServer,
) -> None:
    openai_server.script(reply_status(503), model="test-model")
    openai_server.script(reply_status(403, "no access to this model"), model="backup-model")
    model, _ = make_model(openai_server, max_retries=0, fallbacks=["openai/backup-model"])
    with pytest.raises(AuthenticationFailed, match=r"openai/backup-model .*\(HTTP 403\)"):
        await model.request(CONVERSATION, [], SETTINGS)
    assert len(openai_server.requests) == 2


async def test_configured_key_is_sent(openai_server: OpenAIServer) -> None:
    openai_server.script(reply_text("ok"))
    model, _ = make_model(openai_server, api_key="sk-local-123")
    await model.request(CONVERSATION, [], SETTINGS)
    assert openai_server.requests[0].api_key == "sk-local-123"


async def test_missing_key_fails_before_any_network_call() -> None:
    model = LiteLLMModel("anthropic/claude-sonnet-4-20250514")
    with pytest.raises(AuthenticationFailed, match="ANTHROPIC_API_KEY"):
        await model.request(CONVERSATION, [], SETTINGS)
    assert model.stats.attempts == 0


async def test_hung_primary_times_out_then_fallback_answers(openai_server: OpenAIServer) -> None:
    openai_server.script(reply_hang(120), model="test-model")
    openai_server.script(reply_text("from the backup"), model="backup-model")
    model, _ = make_model(
        openai_server, timeout_s=0.3, max_retries=0, fallbacks=["openai/backup-model"]
    )

    started = time.monotonic()
    response = await model.request(CONVERSATION, [], SETTINGS)

    assert time.monotonic() - started < 60  # margin: a 0.3 s timeout against a 120 s silence
    assert response.message.content == "from the backup"
    assert response.model == "openai/backup-model"
    assert [r.model for r in openai_server.requests] == ["test-model", "backup-model"]
    assert model.stats.fallbacks == 1


async def test_request_timeout_overrides_the_default(openai_server: OpenAIServer) -> None:
    openai_server.script(reply_hang(120))
    model, _ = make_model(openai_server, timeout_s=60, max_retries=0)

    started = time.monotonic()
    with pytest.raises(ModelUnavailable, match=r"timed out after 0.2s|HTTP 408"):
        await model.request(CONVERSATION, [], RequestSettings(timeout_s=0.2))
    assert time.monotonic() - started < 30  # margin: 0.2 s against the default's 60 s


async def test_everything_failing_lists_what_was_tried(openai_server: OpenAIServer) -> None:
    openai_server.script(reply_status(503), reply_status(503), model="test-model")
    openai_server.script(reply_status(500), reply_status(500), model="backup-model")
    model, sleeps = make_model(
        openai_server, max_retries=1, fallbacks=["openai/backup-model"], backoff=Backoff(0.01)
    )

    with pytest.raises(ModelUnavailable) as caught:
        await model.request(CONVERSATION, [], SETTINGS)

    message = str(caught.value)
    for tried in ("test-model attempt 1", "test-model attempt 2", "backup-model attempt 2"):
        assert f"openai/{tried}: HTTP 5" in message
    assert len(openai_server.requests) == 4 and len(sleeps) == 2
    openai_server.assert_consumed()


async def test_bad_request_fails_at_once(openai_server: OpenAIServer) -> None:
    openai_server.script(reply_status(400, "messages: unknown role"))
    openai_server.script(reply_text("should not be asked"), model="backup-model")
    model, sleeps = make_model(openai_server, fallbacks=["openai/backup-model"])

    with pytest.raises(RequestRejected, match="unknown role") as caught:
        await model.request(CONVERSATION, [], SETTINGS)

    assert caught.value.kind == "bad_request" and not caught.value.retryable
    assert len(openai_server.requests) == 1 and sleeps == []


async def test_connection_refused_names_the_address_without_retrying() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}/v1"
    for preflight in (True, False):  # found by the pre-flight check, or by the request
        sleeps = Sleeps()
        model = LiteLLMModel(
            "openai/test-model", api_base=base, preflight=preflight, sleep=sleeps, timeout_s=5
        )
        with pytest.raises(EndpointUnreachable, match="is the server running") as caught:
            await model.request(CONVERSATION, [], SETTINGS)
        assert base in str(caught.value) and caught.value.address == base
        assert "InternalServerError" not in str(caught.value)
        assert sleeps == []  # nothing listens: waiting would not help


@pytest.mark.slow
async def test_json_schema_sent_only_when_supported(openai_server: OpenAIServer) -> None:
    schema = {"type": "object", "properties": {"verdict": {"type": "string"}}}
    settings = RequestSettings(output_schema=schema, output_name="Trade verdict")
    openai_server.script(reply_text('{"verdict": "buy"}'), reply_text('{"verdict": "buy"}'))

    native, _ = make_model(openai_server, capabilities={"json_schema": True})
    await native.request(CONVERSATION, [], settings)
    plain, _ = make_model(openai_server, response_format="never")
    assert not plain.supports("json_schema")
    await plain.request(CONVERSATION, [], settings)

    assert openai_server.requests[0].response_format == {
        "type": "json_schema",
        "json_schema": {"name": "Trade_verdict", "schema": schema, "strict": False},
    }
    assert openai_server.requests[1].response_format is None


def _chart_result() -> list[Message]:
    return [
        AssistantMessage(tool_calls=[ToolCall(id="call_1", name="chart", arguments="{}")]),
        ToolMessage(
            tool_call_id="call_1",
            name="chart",
            content=[TextPart(text="chart of MSFT"), ImagePart(data=PNG)],
        ),
    ]


async def test_tool_result_image_reaches_a_vision_model(openai_server: OpenAIServer) -> None:
    openai_server.script(reply_text("an uptrend"))
    model, _ = make_model(openai_server, capabilities={"vision": True})

    await model.request([*CONVERSATION, *_chart_result()], [], SETTINGS)

    sent = openai_server.requests[0].messages
    tool = next(m for m in sent if m["role"] == "tool")
    assert "chart of MSFT" in json.dumps(tool["content"])
    # OpenAI takes images only from users, so LiteLLM moves it right after the tool results.
    data_url = ImagePart(data=PNG).data_url()
    assert data_url in json.dumps(sent[sent.index(tool) + 1 :])


async def test_tool_result_image_becomes_a_note_without_vision(
    openai_server: OpenAIServer,
) -> None:
    openai_server.script(reply_text("no chart seen"))
    model, _ = make_model(openai_server)
    assert not model.supports("vision")

    await model.request([*CONVERSATION, *_chart_result()], [], SETTINGS)

    sent = openai_server.requests[0].messages
    assert sent[-1]["role"] == "tool"
    assert sent[-1]["content"].startswith("chart of MSFT\n[image omitted (image/png")
    assert "base64" not in json.dumps(sent)

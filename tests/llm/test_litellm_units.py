"""LiteLLMModel's pieces without a server: conversion, capabilities, cost, errors, backoff."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest

from alphadesk.llm.litellm_model import (
    Backoff,
    LiteLLMModel,
    _retry_after,
    credential_env_vars,
    detect_capability,
)
from alphadesk.llm.litellm_response import cost_of, load_litellm, parse_message
from alphadesk.llm.messages import (
    AssistantMessage,
    ImagePart,
    Message,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from alphadesk.llm.openai_format import to_openai_messages, to_openai_tools

# LiteLLM's provider types trip a pydantic warning on first use; alphadesk filters it once
# per process, but pytest resets warning filters between tests.
pytestmark = pytest.mark.filterwarnings("ignore:.*using the `ReadOnly` qualifier:UserWarning")

PNG = b"\x89PNG\r\n\x1a\n tiny"


# -- messages ---------------------------------------------------------------------------------


def test_every_message_kind_converts() -> None:
    messages: list[Message] = [
        SystemMessage(content="be brief"),
        UserMessage(content="hi"),
        AssistantMessage(
            content="checking",
            tool_calls=[ToolCall(id="c1", name="get_quote", arguments='{"symbol": "MSFT"}')],
        ),
        ToolMessage(tool_call_id="c1", name="get_quote", content='{"price": 1}'),
        AssistantMessage(content="done"),
    ]
    assert to_openai_messages(messages, vision=False) == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": "checking",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_quote", "arguments": '{"symbol": "MSFT"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "get_quote", "content": '{"price": 1}'},
        {"role": "assistant", "content": "done"},
    ]


def test_assistant_without_content_or_calls_sends_empty_text() -> None:
    (tool_only,) = to_openai_messages(
        [AssistantMessage(tool_calls=[ToolCall(id="c", name="t")])], vision=False
    )
    (empty,) = to_openai_messages([AssistantMessage()], vision=False)
    assert tool_only["content"] is None and tool_only["tool_calls"][0]["function"]["arguments"]
    assert empty == {"role": "assistant", "content": ""}


def test_user_image_is_a_data_url_part_for_vision_models() -> None:
    message = UserMessage(content=[TextPart(text="what trend?"), ImagePart(data=PNG)])
    (converted,) = to_openai_messages([message], vision=True)
    assert converted["content"] == [
        {"type": "text", "text": "what trend?"},
        {"type": "image_url", "image_url": {"url": ImagePart(data=PNG).data_url()}},
    ]
    assert converted["content"][1]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")


def test_images_become_notes_without_vision() -> None:
    message = ToolMessage(
        tool_call_id="c1",
        name="chart",
        content=[TextPart(text="chart"), ImagePart(data=PNG, media_type="image/jpeg")],
    )
    (converted,) = to_openai_messages([message], vision=False)
    assert converted["content"] == (
        f"chart\n[image omitted (image/jpeg, {len(PNG)} bytes): this model does not accept images]"
    )


def test_tool_result_image_stays_in_tool_parts_for_vision() -> None:
    message = ToolMessage(tool_call_id="c1", name="chart", content=[ImagePart(data=PNG)])
    (converted,) = to_openai_messages([message], vision=True)
    assert converted["role"] == "tool"
    assert converted["content"][0]["type"] == "image_url"


def test_text_only_parts_collapse_to_a_string() -> None:
    message = UserMessage(content=[TextPart(text="a"), TextPart(text="b")])
    assert to_openai_messages([message], vision=True) == [{"role": "user", "content": "a\nb"}]


def test_tools_convert_to_functions() -> None:
    spec = ToolSpec(name="t", description="does t", parameters={"type": "object"})
    assert to_openai_tools([spec]) == [
        {
            "type": "function",
            "function": {"name": "t", "description": "does t", "parameters": {"type": "object"}},
        }
    ]


# -- responses --------------------------------------------------------------------------------


def _litellm_response(message: dict[str, Any], **kwargs: Any) -> Any:
    litellm = load_litellm()
    return litellm.ModelResponse(
        choices=[{"index": 0, "message": message, "finish_reason": "tool_calls"}], **kwargs
    )


def test_tool_calls_without_ids_or_arguments_still_parse() -> None:
    raw = _litellm_response(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": None, "type": "function", "function": {"name": "a", "arguments": ""}},
                {"id": "x", "type": "function", "function": {"name": "b", "arguments": "{}"}},
            ],
        }
    )
    message, finish = parse_message(raw, "openai/m")
    assert finish == "tool_calls" and message.content is None
    first, second = message.tool_calls
    assert first.id and first.id != second.id  # LiteLLM invents ids some servers omit
    assert (first.name, first.arguments) == ("a", "{}")
    assert (second.id, second.name) == ("x", "b")


def test_parsing_fills_ids_and_serialises_dict_arguments_itself() -> None:
    call = SimpleNamespace(id=None, function=SimpleNamespace(name="a", arguments={"k": 1}))
    message = SimpleNamespace(content="thinking", tool_calls=[call])
    raw = SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason=None)])
    parsed, finish = parse_message(raw, "ollama/m")
    assert parsed.tool_calls == [ToolCall(id="call_1", name="a", arguments='{"k": 1}')]
    assert parsed.content == "thinking" and finish is None


def test_no_choices_is_a_retryable_bad_response() -> None:
    with pytest.raises(Exception, match="no choices") as caught:
        parse_message(SimpleNamespace(choices=[]), "openai/m")
    error, verdict = LiteLLMModel("openai/m")._typed(caught.value, "openai/m", {}, 5)
    assert verdict == "retry" and error.retryable


class _Weird:
    def __init__(self, hidden: Any) -> None:
        self._hidden_params = hidden


@pytest.mark.parametrize(
    ("raw", "model"),
    [
        (object(), "openai/unknown-model"),
        (_Weird(None), "no-provider"),
        (_Weird({"response_cost": "not a number"}), "openai/gpt-4o"),
        (_Weird({"response_cost": float("nan")}), "openai/gpt-4o"),
        (_Weird({"response_cost": -3.0}), "openai/gpt-4o"),
        (_Weird({"response_cost": None}), "openai/test-model"),
    ],
)
def test_cost_never_crashes(raw: Any, model: str) -> None:
    assert cost_of(raw, model) == 0.0


def test_cost_of_a_known_model_comes_from_litellm() -> None:
    raw = _litellm_response(
        {"role": "assistant", "content": "hi"},
        model="gpt-4o",
        usage={"prompt_tokens": 1000, "completion_tokens": 1000, "total_tokens": 2000},
    )
    assert 0 < cost_of(raw, "openai/gpt-4o") < 1
    assert cost_of(_Weird({"response_cost": 0.25}), "anything") == 0.25


# -- capabilities -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "api_base", "expected"),
    [
        ("openai/gpt-4o", None, {"tools": True, "vision": True, "json_schema": True}),
        # LiteLLM would emulate the schema with a forced tool call, blocking our tools.
        (
            "anthropic/claude-sonnet-4-20250514",
            None,
            {"tools": True, "vision": True, "json_schema": False},
        ),
        # Native structured output leaves tool use alone.
        ("anthropic/claude-sonnet-4-5", None, {"tools": True, "vision": True, "json_schema": True}),
        ("gemini/gemini-2.5-flash", None, {"tools": True, "vision": True, "json_schema": False}),
        ("openai/some-local-model", None, {"tools": True, "vision": False, "json_schema": False}),
        ("ollama/llama3", None, {"tools": True, "vision": False, "json_schema": False}),
        ("nosuchprovider/x", None, {"tools": False, "vision": False, "json_schema": False}),
        ("nosuchprovider/x", "http://h/v1", {"tools": True, "vision": False, "json_schema": False}),
    ],
)
def test_capabilities_never_raise(
    model: str, api_base: str | None, expected: dict[str, bool]
) -> None:
    found = {c: detect_capability(model, c, api_base=api_base) for c in expected}
    assert found == expected
    assert detect_capability(model, "telepathy") is False


def test_capability_overrides_win_and_typos_are_refused() -> None:
    model = LiteLLMModel("openai/my-local-vlm", capabilities={"vision": True, "tools": False})
    assert model.supports("vision") and not model.supports("tools")
    assert not model.supports("json_schema")
    with pytest.raises(ValueError, match="unknown capabilities"):
        LiteLLMModel("openai/x", capabilities={"visoin": True})


def test_constructor_refuses_bad_numbers() -> None:
    with pytest.raises(ValueError, match="timeout_s"):
        LiteLLMModel("openai/x", timeout_s=0)
    with pytest.raises(ValueError, match="max_retries"):
        LiteLLMModel("openai/x", max_retries=-1)


def test_fallbacks_drop_duplicates_and_the_primary() -> None:
    model = LiteLLMModel("openai/a", fallbacks=["openai/b", "openai/a", "openai/b", "openai/c"])
    assert model.fallbacks == ["openai/b", "openai/c"]


# -- errors and backoff -----------------------------------------------------------------------


def _verdict(exc: Exception, *, schema_sent: bool = False) -> tuple[str, str]:
    model = LiteLLMModel("openai/m", api_base="http://127.0.0.1:9/v1")
    kwargs = {"response_format": {}} if schema_sent else {}
    error, verdict = model._typed(exc, "openai/m", kwargs, 5)
    return type(error).__name__, verdict


def test_error_classification() -> None:
    litellm = load_litellm()
    common = {"llm_provider": "openai", "model": "m"}
    assert _verdict(litellm.RateLimitError(message="slow down", **common)) == (
        "RateLimited",
        "retry",
    )
    # A whole-answer timeout is not retried on the same model (it would take as long again).
    assert _verdict(litellm.Timeout(message="late", **common)) == ("ProviderTimeout", "next model")
    assert _verdict(TimeoutError()) == ("ProviderTimeout", "next model")
    assert _verdict(litellm.APIConnectionError(message="reset by peer", **common)) == (
        "ProviderConnectionError",
        "retry",
    )
    assert _verdict(litellm.AuthenticationError(message="bad key", **common)) == (
        "AuthenticationFailed",
        "stop",
    )
    # LiteLLM reports a missing key as a 500; it must not be retried as one.
    missing = litellm.InternalServerError(message="Missing credentials. Set it", **common)
    assert _verdict(missing) == ("AuthenticationFailed", "stop")
    assert _verdict(litellm.BadRequestError(message="bad", **common)) == (
        "RequestRejected",
        "stop",
    )
    assert _verdict(litellm.NotFoundError(message="no model", **common)) == (
        "EndpointUnreachable",
        "stop",
    )
    # llama.cpp's answer to an unparseable tool call in the history: a 500 that never heals.
    unparseable = litellm.InternalServerError(
        message="Failed to parse tool call arguments as JSON: [json.exception.parse_error]",
        **common,
    )
    assert _verdict(unparseable) == ("RequestRejected", "stop")
    overflow = litellm.BadRequestError(
        message="the request exceeds the available context size", **common
    )
    assert _verdict(overflow) == ("RequestRejected", "stop")
    refused_schema = litellm.BadRequestError(message="response_format not supported", **common)
    assert _verdict(refused_schema, schema_sent=True) == (
        "RequestRejected",
        "drop response_format",
    )
    assert _verdict(litellm.InternalServerError(message="overloaded", **common)) == (
        "ProviderServerError",
        "retry",
    )
    assert _verdict(ValueError("bug")) == ("ModelError", "stop")


def test_retry_after_is_read_defensively() -> None:
    class Err(Exception):
        def __init__(self, headers: Any) -> None:
            self.litellm_response_headers = headers

    assert _retry_after(Err({"retry-after": "2.5"})) == 2.5
    assert _retry_after(Err({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) is None
    assert _retry_after(Err(None)) is None
    assert _retry_after(ValueError()) is None


def test_backoff_is_exponential_capped_and_jittered() -> None:
    backoff = Backoff(base_s=1, max_s=5, jitter=0.5)
    rng = random.Random(1)
    delays = [backoff.delay(retry, rng) for retry in range(6)]
    for retry, delay in enumerate(delays):
        ceiling = min(5, 2**retry)
        assert ceiling / 2 <= delay <= ceiling
    assert Backoff(jitter=0).delay(2, rng) == 4
    assert Backoff(max_s=5).delay(0, rng, retry_after=60) == 5  # never wait past the cap


def test_credential_env_vars() -> None:
    assert credential_env_vars("anthropic/claude-x") == ("ANTHROPIC_API_KEY",)
    assert credential_env_vars("openai/gpt-4o") == ("OPENAI_API_KEY",)
    assert "GEMINI_API_KEY" in credential_env_vars("gemini/gemini-2.5-flash")
    assert credential_env_vars("together_ai/some-model")  # from LiteLLM, never empty

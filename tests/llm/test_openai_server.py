"""The test server itself: routing, streaming, recording, clean shutdown."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from alphadesk.llm.litellm_response import load_litellm
from tests.support.openai_server import (
    OpenAIServer,
    reply_hang,
    reply_json,
    reply_malformed,
    reply_status,
    reply_text,
    reply_tool_calls,
)

pytestmark = pytest.mark.filterwarnings("ignore:.*using the `ReadOnly` qualifier:UserWarning")


def _post(
    server: OpenAIServer, body: dict[str, object], path: str = "/chat/completions"
) -> httpx.Response:
    return httpx.post(server.api_base + path, json=body, timeout=5)


def test_per_model_queues_come_first_then_shared_then_exhausted(
    openai_server: OpenAIServer,
) -> None:
    openai_server.script(reply_text("shared"))
    openai_server.script(reply_text("only for b"), model="b")

    assert _post(openai_server, {"model": "b"}).json()["choices"][0]["message"]["content"] == (
        "only for b"
    )
    assert _post(openai_server, {"model": "b"}).json()["choices"][0]["message"]["content"] == (
        "shared"
    )
    exhausted = _post(openai_server, {"model": "a"})
    assert exhausted.status_code == 400 and "no scripted reply" in exhausted.text
    assert [r.model for r in openai_server.requests] == ["b", "b", "a"]
    openai_server.assert_consumed()


def test_responder_answers_when_nothing_is_scripted(openai_server: OpenAIServer) -> None:
    openai_server.responder = lambda request: reply_text(f"echo {request.model}")
    reply = _post(openai_server, {"model": "m"}).json()
    assert reply["choices"][0]["message"]["content"] == "echo m"
    assert reply["usage"] == {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}


def test_errors_and_raw_bodies(openai_server: OpenAIServer) -> None:
    openai_server.script(
        reply_status(429, retry_after=3),
        reply_malformed("{oops"),
        reply_json({"weird": True}, status=202),
    )
    limited = _post(openai_server, {"model": "m"})
    assert limited.status_code == 429 and limited.headers["retry-after"] == "3"
    assert limited.json()["error"]["code"] == "rate_limit_exceeded"
    assert _post(openai_server, {"model": "m"}).text == "{oops"
    weird = _post(openai_server, {"model": "m"})
    assert (weird.status_code, weird.json()) == (202, {"weird": True})
    assert _post(openai_server, {}, path="/embeddings").status_code == 404
    assert openai_server.requests[-1].path == "/v1/embeddings"


def test_unscripted_assert_consumed_fails(openai_server: OpenAIServer) -> None:
    openai_server.script(reply_text("never asked"))
    with pytest.raises(AssertionError, match="1 scripted replies"):
        openai_server.assert_consumed()
    openai_server.reset()
    openai_server.assert_consumed()


def test_a_hung_reply_does_not_hold_up_shutdown() -> None:
    server = OpenAIServer().start()
    server.script(reply_hang(120))
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(server.api_base + "/chat/completions", json={"model": "m"}, timeout=0.2)
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 60  # margin: half the 120 s it would otherwise wait


async def test_litellm_streams_text_and_tool_calls(openai_server: OpenAIServer) -> None:
    litellm = load_litellm()
    openai_server.script(
        reply_text("streamed words"), reply_tool_calls([("get_x", {"a": 1})], text="calling")
    )
    common = {
        "model": "openai/test-model",
        "messages": [{"role": "user", "content": "hi"}],
        "api_base": openai_server.api_base,
        "api_key": "sk-test",
        "stream": True,
        "num_retries": 0,
    }
    chunks = [chunk async for chunk in await litellm.acompletion(**common)]
    text = litellm.stream_chunk_builder(chunks).choices[0].message.content
    assert text == "streamed words"

    chunks = [chunk async for chunk in await litellm.acompletion(**common)]
    message = litellm.stream_chunk_builder(chunks).choices[0].message
    assert message.content == "calling"
    assert message.tool_calls[0].function.name == "get_x"
    assert json.loads(message.tool_calls[0].function.arguments) == {"a": 1}
    assert all(r.stream for r in openai_server.requests)

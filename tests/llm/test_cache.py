"""The response cache: modes, keys, corruption, concurrency."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from alphadesk.config import CacheMode
from alphadesk.llm.base import CacheMiss, Model, ModelError, ModelUnavailable
from alphadesk.llm.cache import CachedModel, CacheEntryCorrupted, ResponseCache, cache_key
from alphadesk.llm.messages import (
    AssistantMessage,
    ImagePart,
    Message,
    ModelResponse,
    RequestSettings,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from tests.support.connections import connections_opened

MESSAGES: list[Message] = [
    SystemMessage(content="be brief"),
    UserMessage(content=[TextPart(text="look"), ImagePart(data=b"png-bytes")]),
    AssistantMessage(tool_calls=[ToolCall(id="c1", name="quote", arguments='{"s": "MSFT"}')]),
    ToolMessage(tool_call_id="c1", name="quote", content='{"price": 1}'),
]
TOOLS = [ToolSpec(name="quote", description="a quote", parameters={"type": "object"})]
SETTINGS = RequestSettings(max_tokens=100, temperature=0.2)


class FakeModel:
    """Counts requests; answers ``answer N`` or raises what it is told to."""

    def __init__(self, name: str = "fake/model", delay_s: float = 0.0) -> None:
        self.name = name
        self.calls = 0
        self.delay_s = delay_s
        self.fail_with: Exception | None = None

    def supports(self, capability: str) -> bool:
        return capability == "vision"

    async def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        self.calls += 1
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.fail_with is not None:
            raise self.fail_with
        return ModelResponse(
            message=AssistantMessage(content=f"answer {self.calls}"),
            model=self.name,
            usage=Usage(requests=1, input_tokens=10, output_tokens=5, cost_usd=0.25),
            finish_reason="stop",
            latency_s=600.0,  # no lookup takes this long
        )


@pytest.fixture
def cache(tmp_path: Path) -> ResponseCache:
    return ResponseCache(tmp_path / "store.sqlite")


async def test_off_passes_through_and_stores_nothing(cache: ResponseCache) -> None:
    inner = FakeModel()
    model = CachedModel(inner, cache, CacheMode.OFF)
    first = await model.request(MESSAGES, TOOLS, SETTINGS)
    second = await model.request(MESSAGES, TOOLS, SETTINGS)
    assert (first.message.content, second.message.content) == ("answer 1", "answer 2")
    assert inner.calls == 2 and len(cache) == 0 and not second.cached


async def test_record_stores_then_answers_for_free(cache: ResponseCache) -> None:
    inner = FakeModel()
    model = CachedModel(inner, cache, "record")
    assert isinstance(model, Model) and model.name == "fake/model"
    assert model.supports("vision") and not model.supports("tools")

    first = await model.request(MESSAGES, TOOLS, SETTINGS)
    second = await model.request(MESSAGES, TOOLS, SETTINGS)

    assert inner.calls == 1 and len(cache) == 1
    assert not first.cached and first.usage.cost_usd == 0.25
    assert second.cached and second.message == first.message
    assert second.model == "fake/model" and second.finish_reason == "stop"
    assert second.usage == Usage(requests=0, input_tokens=10, output_tokens=5, cost_usd=0.0)
    assert second.latency_s < first.latency_s  # the lookup's time, not the stored call's


async def test_replay_answers_from_another_cache_instance(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    await CachedModel(FakeModel(), ResponseCache(path), CacheMode.RECORD).request(
        MESSAGES, TOOLS, SETTINGS
    )
    inner = FakeModel()
    replay = CachedModel(inner, ResponseCache(path), CacheMode.REPLAY)

    response = await replay.request(MESSAGES, TOOLS, SETTINGS)

    assert response.cached and response.message.content == "answer 1" and inner.calls == 0


async def test_replay_miss_says_which_model_and_how_to_record(cache: ResponseCache) -> None:
    inner = FakeModel("anthropic/claude-x")
    model = CachedModel(inner, cache, CacheMode.REPLAY)
    with pytest.raises(CacheMiss) as caught:
        await model.request(MESSAGES, TOOLS, SETTINGS)
    assert "anthropic/claude-x" in str(caught.value) and "`record`" in str(caught.value)
    assert caught.value.model == "anthropic/claude-x" and inner.calls == 0


async def test_errors_are_not_cached(cache: ResponseCache) -> None:
    inner = FakeModel()
    inner.fail_with = ModelUnavailable("down", model=inner.name)
    model = CachedModel(inner, cache, CacheMode.RECORD)
    with pytest.raises(ModelUnavailable):
        await model.request(MESSAGES, TOOLS, SETTINGS)
    inner.fail_with = None
    assert (await model.request(MESSAGES, TOOLS, SETTINGS)).message.content == "answer 2"
    assert len(cache) == 1


def test_unknown_mode_is_refused(cache: ResponseCache) -> None:
    with pytest.raises(ValueError, match="off, record, replay"):
        CachedModel(FakeModel(), cache, "replay-only")


# -- keys -------------------------------------------------------------------------------------


def test_key_is_stable_across_equal_requests_and_dict_order() -> None:
    tools_reordered = [
        ToolSpec(name="quote", description="a quote", parameters={"type": "object"}),
    ]
    copy = [m.model_copy(deep=True) for m in MESSAGES]
    assert cache_key("m/x", MESSAGES, TOOLS, SETTINGS) == cache_key(
        "m/x", copy, tools_reordered, RequestSettings(temperature=0.2, max_tokens=100)
    )
    a = ToolSpec(name="t", description="d", parameters={"a": 1, "b": {"c": 2, "d": 3}})
    b = ToolSpec(name="t", description="d", parameters={"b": {"d": 3, "c": 2}, "a": 1})
    assert cache_key("m/x", [], [a], SETTINGS) == cache_key("m/x", [], [b], SETTINGS)


def test_key_is_pinned() -> None:
    # Recorded caches are only useful while keys stay the same. If this fails, the key's
    # ingredients changed (e.g. a new field in the message types): bump _KEY_VERSION on
    # purpose and update this value. It is the SHA-256 of this canonical JSON:
    # {"messages":[{"content":"hi","role":"user"}],"model":"openai/gpt-4o","settings":
    #  {"max_tokens":4096,"output_name":"final_answer","output_schema":null,
    #   "temperature":null},"tools":[],"v":1}
    key = cache_key("openai/gpt-4o", [UserMessage(content="hi")], [], RequestSettings())
    assert key == "0977b5544568516c92f5d2678b8e538cccc7667af33569b852a52ed2ffc0ccba"


def test_key_is_the_hash_of_the_whole_requests_canonical_json_every_time() -> None:
    # Written piece by piece with what repeats kept: the same key as writing the request in
    # one piece, on the first request and on a repeat answered from the kept pieces.
    messages: list[Message] = [
        SystemMessage(content="be brief: “quoted” — naïve"),
        UserMessage(content='task {"a": 1}\nline two'),
        *MESSAGES[1:],
    ]
    whole = json.dumps(
        {
            "v": 1,
            "model": "m/x",
            "messages": [m.model_dump(mode="json") for m in messages],
            "tools": [t.model_dump(mode="json") for t in TOOLS],
            "settings": SETTINGS.model_dump(mode="json", exclude={"timeout_s"}),
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    expected = hashlib.sha256(whole.encode("utf-8")).hexdigest()
    assert cache_key("m/x", messages, TOOLS, SETTINGS) == expected
    assert cache_key("m/x", messages, TOOLS, SETTINGS) == expected
    other = [messages[0], UserMessage(content="another task")]
    assert cache_key("m/x", other, TOOLS, SETTINGS) != expected


def _variants() -> dict[str, tuple[str, list[Message], list[ToolSpec], RequestSettings]]:
    base_tool = TOOLS[0]
    other_image = UserMessage(content=[TextPart(text="look"), ImagePart(data=b"other")])
    jpeg = UserMessage(
        content=[TextPart(text="look"), ImagePart(data=b"png-bytes", media_type="image/jpeg")]
    )
    return {
        "model": ("fake/other", MESSAGES, TOOLS, SETTINGS),
        "system text": (
            "fake/model",
            [SystemMessage(content="be long"), *MESSAGES[1:]],
            TOOLS,
            SETTINGS,
        ),
        "role": ("fake/model", [UserMessage(content="be brief"), *MESSAGES[1:]], TOOLS, SETTINGS),
        "image bytes": ("fake/model", [MESSAGES[0], other_image, *MESSAGES[2:]], TOOLS, SETTINGS),
        "image type": ("fake/model", [MESSAGES[0], jpeg, *MESSAGES[2:]], TOOLS, SETTINGS),
        "tool call args": (
            "fake/model",
            [
                *MESSAGES[:2],
                AssistantMessage(tool_calls=[ToolCall(id="c1", name="quote", arguments="{}")]),
                MESSAGES[3],
            ],
            TOOLS,
            SETTINGS,
        ),
        "tool result": (
            "fake/model",
            [*MESSAGES[:3], ToolMessage(tool_call_id="c1", name="quote", content="{}")],
            TOOLS,
            SETTINGS,
        ),
        "message order": ("fake/model", [MESSAGES[1], MESSAGES[0], *MESSAGES[2:]], TOOLS, SETTINGS),
        "one message less": ("fake/model", MESSAGES[:-1], TOOLS, SETTINGS),
        "no tools": ("fake/model", MESSAGES, [], SETTINGS),
        "tool name": (
            "fake/model",
            MESSAGES,
            [base_tool.model_copy(update={"name": "q2"})],
            SETTINGS,
        ),
        "tool description": (
            "fake/model",
            MESSAGES,
            [base_tool.model_copy(update={"description": "x"})],
            SETTINGS,
        ),
        "tool parameters": (
            "fake/model",
            MESSAGES,
            [base_tool.model_copy(update={"parameters": {}})],
            SETTINGS,
        ),
        "tool order": (
            "fake/model",
            MESSAGES,
            [base_tool.model_copy(update={"name": "z"}), base_tool],
            SETTINGS,
        ),
        "max_tokens": (
            "fake/model",
            MESSAGES,
            TOOLS,
            SETTINGS.model_copy(update={"max_tokens": 1}),
        ),
        "temperature": (
            "fake/model",
            MESSAGES,
            TOOLS,
            SETTINGS.model_copy(update={"temperature": 0.3}),
        ),
        "output_schema": (
            "fake/model",
            MESSAGES,
            TOOLS,
            SETTINGS.model_copy(update={"output_schema": {"type": "object"}}),
        ),
        "output_name": (
            "fake/model",
            MESSAGES,
            TOOLS,
            SETTINGS.model_copy(update={"output_name": "verdict"}),
        ),
    }


def test_key_changes_with_every_part_of_the_request() -> None:
    base = cache_key("fake/model", MESSAGES, TOOLS, SETTINGS)
    keys = {name: cache_key(*variant) for name, variant in _variants().items()}
    assert [name for name, key in keys.items() if key == base] == []
    assert len(set(keys.values())) == len(keys)  # and no two variants collide


def test_timeout_does_not_change_the_key() -> None:
    slow = SETTINGS.model_copy(update={"timeout_s": 999.0})
    assert cache_key("m/x", MESSAGES, TOOLS, SETTINGS) == cache_key("m/x", MESSAGES, TOOLS, slow)


# -- corruption -------------------------------------------------------------------------------


def _corrupt(cache: ResponseCache, body: str = '{"message": {"content": 12') -> None:
    with sqlite3.connect(cache.path) as db:
        db.execute("UPDATE model_cache SET response = ?", (body,))
    db.close()


@pytest.mark.parametrize("body", ['{"message": {"content": 12', '{"model": "x"}', "null"])
async def test_corrupted_row_is_a_miss_when_recording(
    cache: ResponseCache, body: str, caplog: pytest.LogCaptureFixture
) -> None:
    inner = FakeModel()
    model = CachedModel(inner, cache, CacheMode.RECORD)
    await model.request(MESSAGES, TOOLS, SETTINGS)
    _corrupt(cache, body)

    with caplog.at_level(logging.WARNING, logger="alphadesk.llm.cache"):
        again = await model.request(MESSAGES, TOOLS, SETTINGS)

    assert inner.calls == 2 and not again.cached and again.message.content == "answer 2"
    assert "unreadable" in caplog.text
    healed = await model.request(MESSAGES, TOOLS, SETTINGS)  # overwritten with the new answer
    assert healed.cached and healed.message.content == "answer 2" and inner.calls == 2


async def test_corrupted_row_is_an_error_when_replaying(cache: ResponseCache) -> None:
    await CachedModel(FakeModel(), cache, CacheMode.RECORD).request(MESSAGES, TOOLS, SETTINGS)
    _corrupt(cache)
    replay = CachedModel(FakeModel(), cache, CacheMode.REPLAY)
    with pytest.raises(CacheEntryCorrupted, match=r"unreadable.*`record`") as caught:
        await replay.request(MESSAGES, TOOLS, SETTINGS)
    assert isinstance(caught.value, ModelError) and caught.value.model == "fake/model"


# -- concurrency ------------------------------------------------------------------------------


async def test_identical_concurrent_requests_reach_the_model_once(cache: ResponseCache) -> None:
    inner = FakeModel(delay_s=0.05)
    model = CachedModel(inner, cache, CacheMode.RECORD)
    other = [*MESSAGES, UserMessage(content="and another thing")]

    answers = await asyncio.gather(
        *(model.request(MESSAGES, TOOLS, SETTINGS) for _ in range(5)),
        model.request(other, TOOLS, SETTINGS),
    )

    assert inner.calls == 2 and len(cache) == 2
    assert sum(not a.cached for a in answers) == 2
    assert {a.message.content for a in answers[:5]} == {answers[0].message.content}
    assert model._locks == {}  # nothing left behind


@pytest.mark.slow
def test_many_writers_share_one_file(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    ResponseCache(path)
    response = ModelResponse(message=AssistantMessage(content="x"), model="m/x")

    def write(prefix: str) -> None:
        cache = ResponseCache(path)
        for i in range(40):
            cache.put(f"{prefix}-{i}", "m/x", response)

    threads = [threading.Thread(target=write, args=(f"t{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    script = (
        "import sys\n"
        "from alphadesk.llm.cache import ResponseCache\n"
        "from alphadesk.llm.messages import AssistantMessage, ModelResponse\n"
        "cache = ResponseCache(sys.argv[1])\n"
        "r = ModelResponse(message=AssistantMessage(content='from a process'), model='m/x')\n"
        "cache.put('process-key', 'm/x', r)\n"
        "print(len(cache))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "161"
    cache = ResponseCache(path)
    hit = cache.get("process-key")
    assert hit is not None and hit.message.content == "from a process"
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    db.close()
    assert cache.clear("m/other") == 0 and cache.clear() == 161 and len(cache) == 0


async def test_a_cache_answers_and_records_through_one_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A connection opened and closed per lookup checkpointed the log (a sync to disk) at
    # every close: tens of milliseconds a call, most of a rules decision's time.
    cache = ResponseCache(tmp_path / "store.sqlite")
    opened = connections_opened(monkeypatch)
    model = CachedModel(FakeModel(), cache, CacheMode.RECORD)
    for question in ("one", "two", "one"):
        await model.request([UserMessage(content=question)], TOOLS, SETTINGS)
    assert len(opened) == 1 and len(cache) == 2
    cache.close()
    assert len(ResponseCache(tmp_path / "store.sqlite")) == 2  # committed, not just kept

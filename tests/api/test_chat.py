"""``/chat/v3``: the assistant's events as server-sent events."""

from __future__ import annotations

import httpx

from alphadesk.store import ConversationStore, RunStore
from tests.api.conftest import DAY
from tests.support.live_api import LiveApi


def test_chat_streams_states_tools_tokens_and_the_answer(
    api: LiveApi, client: httpx.Client
) -> None:
    events = api.stream(client, "/chat/v3", {"question": "how does NVDA look?", "as_of": DAY})
    names = [e.event for e in events]
    assert names[-1] == "chat_finished"
    states = [e.json()["state"] for e in events if e.event == "state"]
    assert states[0] == "PLANNING" and states[-1] == "IDLE" and "RESPONDING" in states
    assert "ERROR" not in states
    assert {"classified", "routed", "tool_started", "tool_finished", "numbers_checked"} <= set(
        names
    )
    result = events[-1].json()["result"]
    assert result["status"] == "completed"
    tokens = [
        e.json()["text"]
        for e in events
        if e.event == "text_delta" and e.json()["agent"] == "answer"
    ]
    assert len(tokens) > 1 and "".join(tokens) == result["answer"]
    assert names.index("tool_finished") < names.index("text_delta")
    run = RunStore(api.settings.store_path).get(result["run_id"])
    assert run.kind == "assistant" and run.status == "completed"

    follow_up = api.stream(
        client,
        "/chat/v3",
        {"question": "and its volatility?", "session_id": result["session_id"], "as_of": DAY},
    )
    assert follow_up[-1].json()["result"]["session_id"] == result["session_id"]
    history = ConversationStore(api.settings.store_path).history(result["session_id"])
    assert [m.role for m in history] == ["user", "assistant", "user", "assistant"]

    # The first question replays as asked (before the follow-up), adding nothing to the
    # conversation; its report is the answer with its tool calls.
    replay = client.post(f"/runs/{result['run_id']}/replay")
    assert replay.status_code == 200, replay.text
    body = replay.json()
    assert body["same_decision"] is True and body["decision"] == "completed"
    assert body["result"]["answer"] == result["answer"]
    assert len(ConversationStore(api.settings.store_path).history(result["session_id"])) == 4
    report = client.get(f"/runs/{result['run_id']}/report").text
    assert result["answer"] in report and "| get_technical_indicators |" in report


def test_chat_rejects_bad_questions_before_streaming(client: httpx.Client) -> None:
    for body in (
        {"question": ""},
        {"question": "x" * 5000},
        {"question": "hi", "session_id": "../x"},
        {"question": "hi", "model": "openai/gpt-4o"},
        {},
    ):
        response = client.post("/chat/v3", json=body)
        assert response.status_code == 422, body
        assert response.headers["content-type"] == "application/json"
        assert set(response.json()["error"]) == {"type", "message", "hint"}

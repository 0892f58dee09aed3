"""A question is a recorded run like any other: it replays from the response cache with the
conversation it was asked in, it resumes from its checkpoints, and its report says what
it answered and from what."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from alphadesk.agent.events import TextDelta
from alphadesk.cli.app import app
from alphadesk.config import CacheMode, ModelSettingsConfig, Settings
from alphadesk.data.base import MarketData
from alphadesk.pipelines.assistant import AssistantPipeline, ChatRequest, ChatResult
from alphadesk.pipelines.runner import PipelineRunner, replay
from alphadesk.store import ConversationStore, RunStore
from tests.pipelines.assistant.conftest import Make, ask
from tests.support.openai_server import OpenAIServer, reply_text

pytestmark = pytest.mark.filterwarnings("ignore:.*using the `ReadOnly` qualifier:UserWarning")


def test_the_cli_replays_an_answer_and_the_conversation_is_left_alone(tmp_path: Path) -> None:
    cli = CliRunner()
    env = {"ALPHADESK_DATA_DIR": str(tmp_path), "COLUMNS": "200"}
    asked = cli.invoke(app, ["ask", "how does NVDA look technically", "--json"], env=env)
    assert asked.exit_code == 0, asked.output
    first = json.loads(asked.stdout)
    assert first["status"] == first["decision"] == "completed" and first["symbol"] == "NVDA"

    again = cli.invoke(app, ["runs", "replay", first["run_id"]], env=env)
    assert again.exit_code == 0, again.output
    assert "identical decision (completed)" in again.output

    store = RunStore(tmp_path / "alphadesk.sqlite")
    (replayed,) = [run for run in store.recent(kind="assistant") if run.id != first["run_id"]]
    assert replayed.result is not None and replayed.result["answer"] == first["answer"]
    # A replay repeats the answer; it is not a new exchange of the conversation.
    conversations = ConversationStore(tmp_path / "alphadesk.sqlite")
    assert [m.run_id for m in conversations.history(first["session_id"])] == [first["run_id"]] * 2
    assert {e.run_id for e in conversations.audit_log()} == {first["run_id"]}

    # Asked with no date, the run is recorded as of the instant the question resolved.
    assert store.get(first["run_id"]).as_of is not None
    assert store.get(first["run_id"]).as_of.isoformat() == first["as_of"].replace("Z", "+00:00")

    shown = cli.invoke(app, ["runs", "show", first["run_id"]], env=env)
    assert "Tool calls" in shown.output and "get_technical_indicators" in shown.output
    assert f"{first['numbers']['traced']} of {first['numbers']['checked']} traced" in (shown.output)


async def test_a_follow_up_replays_from_the_cache_with_the_history_it_was_asked_with(
    settings: Settings, market: MarketData, openai_server: OpenAIServer
) -> None:
    answers = ["Bitcoin closed at its last bundled close.", "NVDA follows the same data."]
    for text in answers:
        openai_server.script(reply_text(text, chunk_delay_s=0.001), model="answer")
    models = ModelSettingsConfig(
        api_base=openai_server.api_base, max_retries=0, timeout_s=30,
        per_agent={"answer": "openai/answer"},
    )  # fmt: skip
    recording = settings.model_copy(update={"models": models, "cache": CacheMode.RECORD})
    pipeline = AssistantPipeline(recording, market)
    first, _ = await ask(pipeline, "how does bitcoin look?")
    second, _ = await ask(pipeline, "and NVDA?", session_id=first.session_id)
    assert second.answer == answers[1] and len(openai_server.requests) == 2
    assert "user: how does bitcoin look?" in openai_server.requests[1].messages[-1]["content"]

    # The conversation has grown since: the replay asks with the history recorded with the
    # question, so every model call is answered from the cache (its text still reaches the
    # event sink as a delta).
    events: list[object] = []
    replayed, same = await replay(recording, market, second.run_id, on_event=events.append)
    assert same and isinstance(replayed, ChatResult)
    assert replayed.answer == answers[1] and replayed.run_id != second.run_id
    assert len(openai_server.requests) == 2  # nothing reached the provider
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert "".join(deltas) == answers[1]
    assert len(ConversationStore(settings.store_path).history(first.session_id)) == 4


async def test_a_question_stopped_after_planning_resumes_where_it_stopped(make: Make) -> None:
    pipeline = make()
    request = pipeline.prepared(ChatRequest(question="compare AAPL and MSFT"))
    runner = PipelineRunner(pipeline.settings, pipeline, charts=False)
    assert await runner.analyze(request, interrupt_after=["plan"]) is None
    store = RunStore(pipeline.settings.store_path)
    (stopped,) = store.recent(kind="assistant")
    assert stopped.status == "interrupted" and stopped.result is None
    planned = [(e["kind"], e["agent"]) for e in store.events(stopped.id)]
    assert ("routed", "assistant") in planned and ("tool_started", "assistant") not in planned

    resumed = await runner.analyze(request, resume_run_id=stopped.id)
    assert resumed is not None and resumed.run_id == stopped.id
    assert resumed.status == "completed" and resumed.route is not None
    assert resumed.route.strategy == "PARALLEL" and "AAPL" in resumed.answer
    done = [(e["kind"], e["agent"]) for e in store.events(stopped.id)]
    assert done.count(("routed", "assistant")) == 1  # planned once, then executed
    # The classifier's lookup, made before the stop, is in the result and was not made again.
    assert done.count(("tool_started", "classifier")) == 1
    assert done.count(("tool_started", "assistant")) == len(resumed.tool_calls) - 1 == 4
    history = ConversationStore(pipeline.settings.store_path).history(resumed.session_id)
    assert [m.role for m in history] == ["user", "assistant"]


async def test_a_question_is_recorded_with_its_conversation_and_instant(make: Make) -> None:
    pipeline = make()
    first, _ = await ask(pipeline, "hello")
    second, _ = await ask(pipeline, "thanks!", session_id=first.session_id)
    run = RunStore(pipeline.settings.store_path).get(second.run_id)
    recorded = ChatRequest.model_validate(run.request)
    assert recorded.session_id == first.session_id and recorded.asked_at is not None
    assert [(m.role, m.content) for m in recorded.history or []] == [
        ("user", "hello"),
        ("assistant", first.answer),
    ]
    assert recorded.limits.request_timeout_s == pipeline.settings.assistant.request_timeout_s


class _StalledData:
    """Market data whose price reads time out (a provider's own timeout, not the question's)."""

    def __init__(self, market: MarketData) -> None:
        self._market = market

    def __getattr__(self, name: str) -> object:
        return getattr(self._market, name)

    def daily_bars(self, *args: object, **kwargs: object) -> object:
        raise TimeoutError("the provider did not answer")


async def test_a_timeout_that_is_not_the_questions_ends_in_error_not_a_crash(
    settings: Settings, market: MarketData
) -> None:
    pipeline = AssistantPipeline(settings, _StalledData(market), model="rules")  # type: ignore[arg-type]
    result, _ = await ask(pipeline, "how does NVDA look?")
    assert result.status == "error" and "TimeoutError" in (result.error or ""), result.error
    assert "took longer than" not in (result.error or "")
    assert RunStore(settings.store_path).get(result.run_id).status == "error"

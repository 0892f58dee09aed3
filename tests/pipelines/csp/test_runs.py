"""Recorded runs: resuming after an interruption, replaying from the cache over HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from alphadesk.agents.csp import default_agents
from alphadesk.config import CacheMode, ModelSettingsConfig, Settings
from alphadesk.data.base import MarketData
from alphadesk.llm.rules import RulesModel
from alphadesk.pipelines.csp.models import CspRequest
from alphadesk.pipelines.csp.pipeline import CspPipeline
from alphadesk.pipelines.runner import PipelineRunner, replay
from alphadesk.store import RunStore
from tests.pipelines.conftest import close_of, facts_for
from tests.support.counting import Counted
from tests.support.openai_server import OpenAIServer, reply_text

pytestmark = pytest.mark.slow


async def test_a_run_stopped_after_options_resumes_without_redoing_the_chart(
    settings: Settings, market: MarketData
) -> None:
    agents = default_agents()
    models = {name: Counted(RulesModel(agents.by_name(name).policy)) for name in agents.names}
    runner = PipelineRunner(settings, CspPipeline(settings, market, models=models))
    request = CspRequest(symbol="NVDA", as_of=close_of("2024-11-29"))

    assert await runner.analyze(request, interrupt_after=["options"]) is None
    store = RunStore(settings.store_path)
    (run,) = store.recent(kind="csp")
    assert run.status == "interrupted" and "--resume" in (run.error or "")
    checkpoints = settings.data_dir / "checkpoints"
    assert [p.name for p in checkpoints.glob("*.sqlite")] == [f"{run.id}.sqlite"]
    calls_before = {name: m.calls for name, m in models.items()}
    assert calls_before["chart"] > 0 and calls_before["options"] > 0
    assert calls_before["research"] == 0

    result = await runner.analyze(request, resume_run_id=run.id)
    assert result is not None and result.decision == "select"
    assert models["chart"].calls == calls_before["chart"]  # not redone
    assert models["options"].calls == calls_before["options"]
    assert models["research"].calls > 0
    finished = store.get(run.id)
    assert finished.status == "select" and finished.result is not None
    assert {a.name for a in store.artifacts(run.id)} >= {
        "report.md",
        "result.json",
        "chart_NVDA.png",
    }
    assert len(store.ledger(run.id)) == sum(m.calls for m in models.values())
    assert not list(checkpoints.iterdir())  # a finished run's checkpoints are gone


async def test_a_resumed_run_goes_on_with_the_request_it_was_started_with(
    settings: Settings, market: MarketData
) -> None:
    runner = PipelineRunner(settings, CspPipeline(settings, market), charts=False)
    started = CspRequest(symbol="NVDA", as_of=close_of("2024-11-29"))
    assert await runner.analyze(started, interrupt_after=["options"]) is None
    (run,) = RunStore(settings.store_path).recent(kind="csp")

    # `--resume` with another date: the checkpoints belong to the run as it was started.
    other = CspRequest(symbol="NVDA", as_of=close_of("2024-11-27"))
    result = await runner.analyze(other, resume_run_id=run.id)
    assert result is not None and result.run_id == run.id
    assert result.as_of == started.as_of
    reference = await runner.analyze(started)
    assert reference is not None
    assert result.model_dump(exclude={"run_id", "agents"}) == reference.model_dump(
        exclude={"run_id", "agents"}
    )


async def test_full_run_through_litellm_then_replayed_with_zero_model_calls(
    settings: Settings, market: MarketData, openai_server: OpenAIServer
) -> None:
    as_of = close_of("2024-11-29")
    facts = facts_for(market, "NVDA", as_of)
    openai_server.script(
        reply_text(_fenced(facts.chart_answer()), usage=(900, 120)),
        reply_text(_fenced(facts.options_answer()), usage=(1100, 150)),
        reply_text(_fenced(facts.research_answer()), usage=(700, 90)),
        reply_text(
            "Sell the put below support; roll if the stock closes under it.", usage=(400, 30)
        ),
    )
    models = ModelSettingsConfig(api_base=openai_server.api_base, max_retries=0, timeout_s=60)
    recording = settings.model_copy(update={"models": models, "cache": CacheMode.RECORD})
    request = CspRequest(symbol="NVDA", as_of=as_of)

    first = await PipelineRunner(
        recording, CspPipeline(recording, market, model="openai/test-model")
    ).analyze(request)
    assert first is not None and first.decision == "select", first.reason
    assert [a.agent for a in first.agents] == ["chart", "options", "research", "orchestrator"]
    assert {a.model for a in first.agents} == {"openai/test-model"}
    assert sum(a.requests for a in first.agents) == 4
    assert sum(a.tokens for a in first.agents) == 900 + 120 + 1100 + 150 + 700 + 90 + 400 + 30
    assert first.synthesis is not None
    assert (
        first.synthesis.narrative
        == "Sell the put below support; roll if the stock closes under it."
    )
    assert len(openai_server.requests) == 4
    assert '"best_strike"' in openai_server.requests[3].messages[-1]["content"]
    assert openai_server.requests[0].tool_names[:2] == [
        "get_price_history",
        "calculate_swing_points",
    ]
    openai_server.assert_consumed()

    replaying = recording.model_copy(update={"cache": CacheMode.REPLAY})
    again = await PipelineRunner(
        replaying, CspPipeline(replaying, market, model="openai/test-model")
    ).analyze(request)
    assert again is not None
    assert len(openai_server.requests) == 4  # nothing reached the provider
    assert sum(a.requests for a in again.agents) == 0
    assert again.model_dump(exclude={"run_id", "agents"}) == first.model_dump(
        exclude={"run_id", "agents"}
    )

    # The same through `replay`, by run id; a run never recorded fails loudly, offline.
    assert first.run_id is not None
    replayed, same = await replay(recording, market, first.run_id)
    assert same and sum(a.requests for a in replayed.agents) == 0
    assert len(openai_server.requests) == 4
    unrecorded = CspRequest(symbol="NVDA", as_of=close_of("2024-11-27"))
    missed = await PipelineRunner(
        replaying, CspPipeline(replaying, market, model="openai/test-model")
    ).analyze(unrecorded)
    assert missed is not None and missed.decision == "failed"
    assert missed.reason is not None and "CacheMiss" in missed.reason
    assert len(openai_server.requests) == 4


def _fenced(answer: dict[str, Any]) -> str:
    import json

    return f"Here is my analysis.\n```json\n{json.dumps(answer)}\n```"

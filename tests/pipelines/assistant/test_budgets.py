"""The assistant's agents run under the settings' budgets (one agent's wall time included)
with the question's time as the run's, and a bad model name fails when the assistant is
built, not in the middle of a question."""

from __future__ import annotations

import pytest

from alphadesk.config import Settings, UsageLimits
from alphadesk.data.base import MarketData
from alphadesk.llm.testing import ScriptedModel, json_answer
from alphadesk.pipelines.assistant import AssistantPipeline, ChatLimits
from tests.pipelines.assistant.conftest import ask

pytestmark = pytest.mark.filterwarnings("ignore:.*using the `ReadOnly` qualifier:UserWarning")

CLASSIFIED = {"question_type": "market", "symbols": [], "asset_class": "none"}


async def test_an_agent_past_its_own_wall_time_ends_the_question_with_the_budget_named(
    settings: Settings, market: MarketData
) -> None:
    # 0.2 s against a 3 s answer, inside a 60 s question: only the agent's budget can stop it
    settings = settings.model_copy(
        update={"limits": settings.limits.model_copy(update={"agent_wall_time_s": 0.2})}
    )
    slow = ScriptedModel([json_answer(CLASSIFIED)], latency_s=3.0)
    pipeline = AssistantPipeline(settings, market, model="rules", models={"classifier": slow})
    result, _ = await ask(pipeline, "how is the market?", limits=ChatLimits(request_timeout_s=60))
    assert result.status == "error"
    assert result.reason is not None and "agent_wall_time_s" in result.reason
    assert [a.agent for a in result.agents] == ["classifier"]


async def test_the_question_time_is_the_runs_wall_time(
    settings: Settings, market: MarketData
) -> None:
    unlimited = UsageLimits(requests=200)  # no agent budget: only the run's wall time is left
    settings = settings.model_copy(update={"limits": unlimited})
    pipeline = AssistantPipeline(settings, market, model="rules")
    request = pipeline.prepared(
        pipeline.request_type(question="market?", limits=ChatLimits(request_timeout_s=7.5))
    )
    assert pipeline.limits(request) == UsageLimits(requests=200, wall_time_s=7.5)


def test_a_bad_model_name_fails_when_the_assistant_is_built(
    settings: Settings, market: MarketData
) -> None:
    models = settings.models.model_copy(update={"per_agent": {"thinker": "not-a-model"}})
    settings = settings.model_copy(update={"models": models})
    with pytest.raises(ValueError, match="unknown model 'not-a-model'"):
        AssistantPipeline(settings, market)

"""What every pipeline of agents shares, set up once (``AgentPipeline``): the title of its
runs, the label of its models and its report, the same as each pipeline gave them itself."""

from __future__ import annotations

import pytest

from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.llm.testing import ScriptedModel
from alphadesk.pipelines.agent_pipeline import AgentPipeline
from alphadesk.pipelines.algo.models import AlgoRequest
from alphadesk.pipelines.algo.pipeline import StrategyLab
from alphadesk.pipelines.assistant.models import ChatRequest
from alphadesk.pipelines.assistant.pipeline import AssistantPipeline
from alphadesk.pipelines.base import pipeline_class
from alphadesk.pipelines.csp.models import CspRequest
from alphadesk.pipelines.csp.pipeline import CspPipeline
from alphadesk.pipelines.desk.models import DeskRequest
from alphadesk.pipelines.desk.pipeline import TradingDesk
from alphadesk.pipelines.screen.models import ScreenRequest
from alphadesk.pipelines.screen.pipeline import ScreenPipeline
from tests.pipelines.conftest import close_of

AS_OF = close_of("2024-11-29")


@pytest.mark.parametrize("kind", ["algo", "assistant", "csp", "desk", "fund", "screen"])
def test_each_pipeline_of_agents_is_an_agent_pipeline(kind: str) -> None:
    assert issubclass(pipeline_class(kind), AgentPipeline)


def test_titles_name_the_kind_and_symbol(settings: Settings, market: MarketData) -> None:
    csp = CspPipeline(settings, market)
    assert csp.title(CspRequest(symbol="NVDA", as_of=AS_OF)) == "csp NVDA"
    desk = TradingDesk(settings, market, memory=None)
    assert desk.title(DeskRequest(symbol="AAPL", as_of=AS_OF)) == "desk AAPL"
    lab = StrategyLab(settings, market, memory=None)
    goal = AlgoRequest(symbol="AAPL", as_of=AS_OF, goal="Sharpe above 1")
    assert lab.title(goal) == "algo AAPL: Sharpe above 1"
    assistant = AssistantPipeline(settings, market)
    assert assistant.title(ChatRequest(question="How is NVDA doing?")) == "How is NVDA doing?"
    screen = ScreenPipeline(settings, market)
    dates = [close_of("2024-11-22"), AS_OF]
    request = ScreenRequest(symbols=["NVDA", "AAPL"], dates=dates)
    assert screen.title(request) == "csp screen 2024-11-22..2024-11-29 (2 dates), 2 symbols"


def test_labels_name_the_models_of_the_labelled_agents(
    settings: Settings, market: MarketData
) -> None:
    assert CspPipeline(settings, market).model_label == "rules"
    # the narrator's model is not the analysts', so not in the label
    narrated = CspPipeline(settings, market, models={"orchestrator": ScriptedModel([])})
    assert narrated.model_label == "rules"
    named = ScreenPipeline(settings, market, model="openai/gpt-4o-mini")
    assert (
        named.model_label == CspPipeline(settings, market, model="openai/gpt-4o-mini").model_label
    )
    assert named.model_label == "openai/gpt-4o-mini"
    scripted = AssistantPipeline(settings, market, models={"answer": ScriptedModel([])})
    assert scripted.model_label == ", ".join(sorted({"rules", ScriptedModel([]).name}))

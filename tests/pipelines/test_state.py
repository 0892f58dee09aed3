"""Graph state is typed: the desk's, the CSP's, the lab's, the screen's and the assistant's
nodes read and write their models, and the graph keeps them as JSON through one codec;
every pipeline names its graph's shape and lives at pipelines/<kind>/pipeline.py; the
settings' budgets are the engine's one limits type."""

from __future__ import annotations

import json
from typing import Any, get_args, get_type_hints

import pytest
from pydantic import ValidationError

from alphadesk.agent import UsageLimits
from alphadesk.config import Settings, run_budgets
from alphadesk.data.base import MarketData
from alphadesk.pipelines.algo.nodes import LabState
from alphadesk.pipelines.assistant.nodes import ChatState
from alphadesk.pipelines.base import PIPELINES, compiled_graph, pipeline_class
from alphadesk.pipelines.csp.models import CspRequest
from alphadesk.pipelines.csp.nodes import CspState
from alphadesk.pipelines.csp.pipeline import CspPipeline
from alphadesk.pipelines.desk.models import DeskResult
from alphadesk.pipelines.desk.nodes import DESK_STATE, DeskState
from alphadesk.pipelines.models import Failure
from alphadesk.pipelines.screen.nodes import ScreenState
from tests.pipelines.conftest import close_of
from tests.pipelines.desk.conftest import decide


def _untyped(hint: Any) -> bool:
    """Whether ``hint`` is or holds ``Any`` (e.g. ``dict[str, Any]``)."""
    return hint is Any or any(_untyped(arg) for arg in get_args(hint))


@pytest.mark.parametrize("state", [DeskState, CspState, LabState, ScreenState, ChatState])
def test_no_graph_state_holds_untyped_json(state: type) -> None:
    hints = get_type_hints(state)
    untyped = [name for name, hint in hints.items() if _untyped(hint)]
    assert untyped == [], f"{state.__name__} keeps untyped fields: {untyped}"


async def test_a_decided_desk_state_goes_to_json_and_back_unchanged(
    settings: Settings, market: MarketData
) -> None:
    result = await decide(settings, market, "AAPL", "2012-03-30", memory=False)
    assert result.market is not None and result.final is not None and result.debate
    state: DeskState = {
        "market": result.market,
        "facts": result.facts,
        "debate": result.debate,
        "risk_debate": result.risk_debate,
        "final": result.final,
        "reports": result.agents,
        "verdict": Failure(stage="judge", reason="a reason"),
        "result": result,
    }
    stored = json.loads(json.dumps(DESK_STATE.dump(state)))  # plain JSON, as checkpointed
    again = DESK_STATE.load(stored)
    assert again == state
    assert isinstance(again["result"], DeskResult)
    # a subclass's own fields survive (the market report's price, the entries' turns)
    assert again["market"].current_price == result.market.current_price
    assert [e.turn for e in again["debate"]] == [e.turn for e in result.debate]


def test_a_bad_state_is_refused_with_the_field_named() -> None:
    with pytest.raises(ValidationError, match="verdict"):
        DESK_STATE.load({"verdict": {"stage": "judge"}})  # no reason


@pytest.mark.parametrize("kind", sorted(PIPELINES))
def test_every_pipeline_names_its_graph_shape(kind: str) -> None:
    assert callable(pipeline_class(kind).graph_shape)


@pytest.mark.parametrize("kind", sorted(PIPELINES))
def test_every_pipeline_is_its_kinds_pipeline_module(kind: str) -> None:
    assert pipeline_class(kind).__module__ == f"alphadesk.pipelines.{kind}.pipeline"


def test_csp_requests_share_one_compiled_graph(settings: Settings, market: MarketData) -> None:
    csp = CspPipeline(settings, market)
    nvda = CspRequest(symbol="NVDA", as_of=close_of("2024-11-29"))
    apple = CspRequest(symbol="AAPL", as_of=close_of("2012-03-30"), parallel_research=True)
    assert compiled_graph(csp, nvda) is compiled_graph(csp, apple)


def test_the_settings_budgets_are_the_engines_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings()
    assert isinstance(settings.limits, UsageLimits)
    assert settings.limits == run_budgets()
    assert settings.limits.agent_wall_time_s == 300.0
    assert UsageLimits().requests is None  # the engine alone: unlimited
    monkeypatch.setenv("ALPHADESK_LIMITS__AGENT_WALL_TIME_S", "12.5")
    assert Settings().limits.agent_wall_time_s == 12.5
    monkeypatch.setenv("ALPHADESK_LIMITS__AGENT_WALL_TIME_S", "0")
    with pytest.raises(ValidationError, match="agent_wall_time_s"):
        Settings()

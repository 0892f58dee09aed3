"""The debates: every side hears the others. In each round the speakers state their
cases at once, then each answers the others' cases of that same round, before the
manager or the judge decides. Checked on the prompts the offline rules models received."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from alphadesk.agents.desk import default_agents
from alphadesk.config import DeskSettings, Settings
from alphadesk.data.base import MarketData
from alphadesk.llm.base import ProviderServerError
from alphadesk.llm.messages import Message, ModelResponse, RequestSettings, ToolSpec, UserMessage
from alphadesk.llm.rules import RulesModel
from alphadesk.llm.wrapper import ModelWrapper
from alphadesk.pipelines.desk.models import DeskRequest, DeskResult
from alphadesk.pipelines.desk.report import render_report
from tests.pipelines.conftest import close_of
from tests.pipelines.desk.conftest import decide

pytestmark = pytest.mark.slow


class Heard(ModelWrapper):
    """The agent's rules model, keeping every task prompt it was sent; with ``fail_on``,
    the provider fails that call (1-based) instead of answering."""

    def __init__(self, inner: RulesModel, fail_on: int | None = None) -> None:
        super().__init__(inner)
        self.prompts: list[str] = []
        self.fail_on = fail_on

    async def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        self.prompts.append(next(str(m.content) for m in messages if isinstance(m, UserMessage)))
        if len(self.prompts) == self.fail_on:
            raise ProviderServerError("HTTP 503: the provider is overloaded", model=self.name)
        return await super().request(messages, tools, settings)


def heard(**fail_on: int) -> dict[str, Heard]:
    return {s.name: Heard(RulesModel(s.policy), fail_on.get(s.name)) for s in default_agents().all}


def quoted(text: str) -> str:
    """``text`` as a prompt's JSON block shows it."""
    return json.dumps(text)


def said(result: DeskResult, speaker: str, exchange: int, part: str) -> Any:
    (entry,) = [
        e
        for e in [*result.debate, *result.risk_debate]
        if (e.speaker, e.round, e.part) == (speaker, exchange, part)
    ]
    return entry.turn if hasattr(entry, "turn") else entry.view


async def test_each_side_answers_the_others_argument_of_the_same_exchange(
    settings: Settings, market: MarketData
) -> None:
    models = heard()
    result = await decide(settings, market, "AAPL", "2012-03-30", models=models, rounds=2)
    assert result.decision == "BUY", result.reason
    bull, bear = models["bull"].prompts, models["bear"].prompts
    assert len(bull) == len(bear) == 4  # per exchange: an argument, then a rebuttal
    for exchange, (argue, rebut) in enumerate(((0, 1), (2, 3)), start=1):
        bull_case = said(result, "bull", exchange, "argument")
        bear_case = said(result, "bear", exchange, "argument")
        assert f"exchange {exchange} of 2" in bear[rebut]
        # the bear's rebuttal prompt holds the bull's argument of this very exchange, and
        # the bull's rebuttal prompt the bear's
        assert quoted(bull_case.argument) in bear[rebut]
        assert quoted(bear_case.argument) in bull[rebut]
        assert quoted(bull_case.argument) not in bear[argue]  # spoken at the same time
        # and the rebuttal answers it from the facts, point by point
        bull_rebuttal = said(result, "bull", exchange, "rebuttal").rebuttal
        bear_rebuttal = said(result, "bear", exchange, "rebuttal").rebuttal
        for point in bear_case.evidence:
            assert f"{point.reading} ({point.fact} {point.value:g})" in bull_rebuttal
        for point in bull_case.evidence:
            assert f"{point.reading} ({point.fact} {point.value:g})" in bear_rebuttal
    # the second exchange's arguments answer the first exchange's rebuttals
    first_bear_rebuttal = said(result, "bear", 1, "rebuttal")
    assert quoted(first_bear_rebuttal.rebuttal) in bull[2]
    assert said(result, "bull", 1, "argument").rebuttal is None  # nothing to answer yet
    assert said(result, "bull", 2, "argument").rebuttal is not None
    # the bear concedes the bull's points it has no fact against: its conviction falls
    bear_case = said(result, "bear", 1, "argument")
    bull_case = said(result, "bull", 1, "argument")
    conceded = max(0, len(bull_case.evidence) - len(bear_case.evidence))
    assert conceded > 0 and f"{conceded} conceded" in said(result, "bear", 1, "rebuttal").argument
    assert said(result, "bear", 1, "rebuttal").conviction < bear_case.conviction
    # the manager decides on the whole debate, rebuttals included
    (manager,) = models["manager"].prompts
    assert quoted(said(result, "bear", 2, "rebuttal").rebuttal) in manager


async def test_each_risk_analyst_answers_the_other_two_before_the_judge(
    settings: Settings, market: MarketData
) -> None:
    models = heard()
    result = await decide(settings, market, "AAPL", "2012-03-30", models=models, risk_rounds=1)
    assert result.decision == "BUY", result.reason
    personas = ("risky", "safe", "neutral")
    for persona in personas:
        view, rebuttal = models[persona].prompts  # one exchange: a view, then a rebuttal
        assert "(null in the first exchange):\n```json\nnull\n```" in view  # heard none yet
        others = [p for p in personas if p != persona]
        for other in others:  # both other views of this exchange are in the prompt
            assert quoted(said(result, other, 1, "argument").argument) in rebuttal
        answer = said(result, persona, 1, "rebuttal")
        for other in others:  # and the answer names each, with its size
            size = said(result, other, 1, "argument").recommended_size
            assert f"{other} recommends {size:.2f}" in answer.rebuttal
    (judge,) = models["judge"].prompts
    for persona in personas:
        assert quoted(said(result, persona, 1, "rebuttal").rebuttal) in judge
    # the judge takes each analyst's last size (after hearing the others): their median
    last = sorted(said(result, p, 1, "rebuttal").recommended_size for p in personas)
    assert result.final is not None and result.final.size_fraction == pytest.approx(last[1])


async def test_rounds_count_in_the_result_the_events_and_the_report(
    tmp_path: Path, market: MarketData
) -> None:
    settings = Settings(
        data_dir=tmp_path / "d",
        desk=DeskSettings(analysts=["market", "sentiment"], rounds=2, risk_rounds=2),
    )
    request = DeskRequest.from_settings(settings, symbol="KO", as_of=close_of("2015-06-30"))
    assert (request.rounds, request.risk_rounds) == (2, 2)
    events: list[Any] = []
    fields = request.model_dump(include={"analysts", "rounds", "risk_rounds"})
    result = await decide(settings, market, "KO", "2015-06-30", events=events, **fields)
    order = [
        (n, part, speaker)
        for n in (1, 2)
        for part in ("argument", "rebuttal")
        for speaker in ("bull", "bear")
    ]
    assert [(e.round, e.part, e.speaker) for e in result.debate] == order
    assert [(e.round, e.part, e.speaker) for e in result.risk_debate] == [
        (n, part, speaker)
        for n in (1, 2)
        for part in ("argument", "rebuttal")
        for speaker in ("risky", "safe", "neutral")
    ]
    # the event stream names each turn: debate, exchange, argument or rebuttal, speaker
    spoken = [(e.debate, e.round, e.part, e.agent) for e in events if e.kind == "debate_message"]
    investment = [t for t in spoken if t[0] == "investment"]
    assert len(investment) == 8 and len(spoken) == 8 + 12
    for n, part in ((1, "argument"), (1, "rebuttal"), (2, "argument"), (2, "rebuttal")):
        step = investment[:2]
        investment = investment[2:]
        assert sorted(step) == [("investment", n, part, "bear"), ("investment", n, part, "bull")]
    rebutted = next(
        e
        for e in events
        if e.kind == "debate_message" and e.part == "rebuttal" and e.agent == "bear"
    )
    assert rebutted.text == said(result, "bear", 1, "rebuttal").rebuttal
    # the report shows the exchanges in speaking order
    report = render_report(result)
    debate = report.split("## Investment debate")[1].split("## Investment plan")[0]
    marks = [
        "### Round 1",
        "**Bull** argues",
        "**Bear** argues",
        "**Bull** answers",
        "**Bear** answers",
        "### Round 2",
        "**Bull** argues",
    ]
    at = 0
    for mark in marks:
        at = debate.index(mark, at)
    assert "### Round 2" in report.split("## Risk discussion")[1]


async def test_a_failure_mid_debate_stops_the_desk_with_a_typed_failure(
    settings: Settings, market: MarketData
) -> None:
    models = heard(bear=2)  # the bear's rebuttal: the provider fails
    events: list[Any] = []
    result = await decide(settings, market, "AAPL", "2012-03-30", models=models, events=events)
    assert result.decision == "failed" and result.stage == "bear"
    assert result.reason is not None and "ProviderServerError" in result.reason
    assert result.plan is None and result.final is None and result.risk_debate == []
    # what was said before the failure is kept: both arguments and the bull's rebuttal
    assert [(e.speaker, e.part) for e in result.debate] == [
        ("bull", "argument"),
        ("bear", "argument"),
        ("bull", "rebuttal"),
    ]
    assert models["manager"].prompts == [] and models["judge"].prompts == []
    started = {e.agent for e in events if e.kind == "step_started"}
    assert not started & {"manager", "trader", "risky", "safe", "neutral", "judge"}
    report = render_report(result)
    assert "**Failed at bear:**" in report and "No decision was made." in report


@pytest.mark.parametrize(
    ("symbol", "day"),
    [("KO", "2015-06-30"), ("AMZN", "2008-11-28"), ("AAPL", "2012-03-30"), ("MSFT", "2010-06-30")],
)
async def test_without_rounds_the_manager_and_the_judge_decide_without_debates(
    tmp_path: Path, market: MarketData, symbol: str, day: str
) -> None:
    """No rounds: no researcher or risk analyst speaks; the manager decides on the reports
    and says no debate was held, and the judge keeps the trader's own size."""
    models = heard()
    settings = Settings(data_dir=tmp_path / "d")
    result = await decide(settings, market, symbol, day, models=models, rounds=0, risk_rounds=0)
    assert result.debate == [] and result.risk_debate == []
    silent = ("bull", "bear", "risky", "safe", "neutral")
    assert all(models[name].prompts == [] for name in silent)
    assert result.plan is not None and result.proposal is not None and result.final is not None
    assert "no debate was held" in result.plan.rationale
    assert result.final.action == result.proposal.action
    assert result.final.size_fraction == round(result.proposal.size_fraction, 2)
    if result.final.action != "HOLD":
        assert "the trader's size (no risk round)" in result.final.rationale

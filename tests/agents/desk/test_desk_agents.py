"""The desk's agents one by one: factories, typed outputs that cannot contradict
themselves, and the analysts' rules policies on real and on local data."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest
from pydantic import ValidationError

from alphadesk.agent import RunContext, RunScope
from alphadesk.agents.desk import DeskDeps, default_agents
from alphadesk.agents.desk.facts import citation_problems, fact_sheet
from alphadesk.agents.desk.models import DebateTurn, Evidence, MarketReport, RiskView, TradeProposal
from alphadesk.agents.desk.researchers import researcher
from alphadesk.agents.desk.risk import risk_analyst
from alphadesk.agents.desk.tasks import FundamentalsTask, MarketTask, NewsTask, SentimentTask
from alphadesk.analytics.sentiment import lm_lexicon
from alphadesk.config import DataSettings, Settings
from alphadesk.data import build_provider
from alphadesk.data.base import MarketData
from alphadesk.llm.rules import RulesModel
from alphadesk.pipelines.desk.reflection import lesson_of, trade_outcome
from alphadesk.tools.catalog import tool_catalog
from alphadesk.tools.deps import ToolDeps
from alphadesk.tools.social import get_social_sentiment
from tests.pipelines.conftest import close_of

AGENTS = default_agents()


async def run_analyst(name: str, market: MarketData, symbol: str, as_of: datetime) -> object:
    spec = AGENTS.analysts[name]
    kind = {"market": MarketTask, "sentiment": SentimentTask, "news": NewsTask,
            "fundamentals": FundamentalsTask}[name]  # fmt: skip
    task = kind(symbol=symbol, as_of=as_of)
    result = await spec.agent.run(
        RulesModel(spec.policy),
        task.message(),
        deps=DeskDeps(market=market, symbol=symbol),
        scope=RunScope(as_of=as_of),
    )
    assert result.outcome.kind == "completed", result.outcome.reason
    return result.output


def test_one_factory_per_kind_of_debater() -> None:
    bull, bear = researcher("bull"), researcher("bear")
    assert (bull.name, bear.name) == ("bull", "bear")
    assert bull.agent.output_type is bear.agent.output_type is DebateTurn
    assert bull.agent.output_validators == bear.agent.output_validators
    assert (
        "bull researcher" in bull.agent.instructions
        and "bear researcher" in bear.agent.instructions
    )
    assert _without_stance(bull.agent.instructions) == _without_stance(bear.agent.instructions)
    personas = [risk_analyst(p) for p in ("risky", "safe", "neutral")]
    assert {p.agent.output_type for p in personas} == {RiskView}
    assert [p.name for p in AGENTS.risk.values()] == ["risky", "safe", "neutral"]
    assert AGENTS.manager.tier == AGENTS.judge.tier == "deep"
    assert AGENTS.trader.tier == "quick"
    assert AGENTS.names == [
        "market",
        "sentiment",
        "news",
        "fundamentals",
        "bull",
        "bear",
        "manager",
        "trader",
        "risky",
        "safe",
        "neutral",
        "judge",
    ]


def _without_stance(text: str) -> str:
    stance_words = (
        "the strongest case for buying the stock",
        "the strongest case against owning the stock",
        "bullish",
        "bearish",
        "bull",
        "bear",
    )
    for words in stance_words:
        text = text.replace(words, "_")
    return text


def test_positions_cannot_contradict_themselves() -> None:
    base = {"horizon_days": 10, "conviction": 0.5, "rationale": "r"}
    TradeProposal(action="BUY", size_fraction=0.2, entry=100, stop=95, target=110, **base)
    TradeProposal(action="HOLD", size_fraction=0, **base)
    bad = [
        {"action": "BUY", "size_fraction": 0.2, "entry": 100, "stop": 101},
        {"action": "SELL", "size_fraction": 0.2, "entry": 100, "stop": 99},
        {"action": "SELL", "size_fraction": 0.2, "entry": 100, "stop": 105, "target": 101},
        {"action": "BUY", "size_fraction": 0.2, "entry": 100},
        {"action": "BUY", "size_fraction": 0, "entry": 100, "stop": 95},
        {"action": "HOLD", "size_fraction": 0.1},
    ]
    for fields in bad:
        with pytest.raises(ValidationError):
            TradeProposal(**fields, **base)


def test_the_fact_sheet_and_its_citations() -> None:
    report = MarketReport(
        signal="bullish",
        score=0.3,
        confidence=0.6,
        figures={"rsi_14": 55.0},
        summary="s",
        current_price=100.0,
        trend_direction="up",
        trend_quality="weak",
        support_levels=[95.0, 90.0],
        resistance_levels=[110.0],
    )
    sheet = fact_sheet({"market": report})
    assert sheet == {
        "market.score": 0.3,
        "market.rsi_14": 55.0,
        "market.current_price": 100.0,
        "market.support_1": 95.0,
        "market.support_2": 90.0,
        "market.resistance_1": 110.0,
    }
    cite = [
        Evidence(fact="market.rsi_14", value=55.004, lean="bullish", reading="ok"),
        Evidence(fact="market.rsi_14", value=57, lean="bullish", reading="wrong value"),
        Evidence(fact="market.pe_ratio", value=30, lean="bearish", reading="never measured"),
    ]
    problems = citation_problems(cite, sheet)
    assert len(problems) == 2
    assert "market.rsi_14 is 55, not 57" in problems[0]
    assert "'market.pe_ratio' is not on the fact sheet" in problems[1]
    with pytest.raises(ValidationError, match="contradicts score"):
        MarketReport(**{**report.model_dump(), "signal": "bearish"})


async def test_sentiment_reads_the_vix_as_the_data_has_it(tmp_path: Path) -> None:
    market = build_provider(Settings(data_dir=tmp_path))
    as_of = close_of("2015-06-30")
    report = await run_analyst("sentiment", market, "KO", as_of)
    vix = market.daily_bars("^VIX", as_of).prices()
    assert report.figures["vix"] == pytest.approx(float(vix.iloc[-1]), abs=0.01)
    change = float(vix.iloc[-1] - vix.iloc[-2])
    assert report.figures["vix_volatility_change"] == pytest.approx(change, abs=0.01)
    assert report.market_fear == "normal" and report.signal == "neutral" and report.score < 0
    assert not report.social_available
    assert any("social media" in line for line in report.missing)


async def test_the_social_tool_says_it_has_no_data(tmp_path: Path) -> None:
    entry = tool_catalog().get("get_social_sentiment")
    assert entry is not None and entry.toolset == "social"
    market = build_provider(Settings(data_dir=tmp_path))
    ctx = RunContext(
        deps=ToolDeps(market=market), as_of=close_of("2015-06-30"), run_id="t", agent="t"
    )
    found = await get_social_sentiment.function(ctx, "ko")
    assert (found.symbol, found.available, found.posts, found.mood) == ("KO", False, 0, None)
    assert found.missing and "unknown, not neutral" in found.missing[0]


def _local_market(tmp_path: Path) -> MarketData:
    root = tmp_path / "local"
    (root / "news").mkdir(parents=True)
    (root / "fundamentals").mkdir()
    headlines = [
        ("2012-03-28T14:00:00-04:00", "ACME posts strong gains and improved margins"),
        ("2012-03-27T09:00:00-04:00", "ACME wins an excellent contract"),
        ("2012-03-26T10:00:00-04:00", "ACME faces losses and a decline"),
        ("2012-03-31T10:00:00-04:00", "ACME collapses in fraud scandal"),  # after as_of
    ]
    lines = [json.dumps({"published_at": t, "title": title}) for t, title in headlines]
    (root / "news" / "ACME.jsonl").write_text("\n".join(lines) + "\n")
    facts = pd.DataFrame(
        [
            ("Revenues", 100e6, "USD", "2010-12-31", "2011-02-15", "2010-01-01", "10-K"),
            ("Revenues", 130e6, "USD", "2011-12-31", "2012-02-14", "2011-01-01", "10-K"),
            ("NetIncomeLoss", 26e6, "USD", "2011-12-31", "2012-02-14", "2011-01-01", "10-K"),
            ("Revenues", 60e6, "USD", "2012-12-31", "2013-02-14", "2012-01-01", "10-K"),
        ],
        columns=["concept", "value", "unit", "end", "filed", "start", "form"],
    )
    facts.to_csv(root / "fundamentals" / "ACME.csv", index=False)
    settings = Settings(
        data_dir=tmp_path / "d", data=DataSettings(providers=["local", "bundled"], local_dir=root)
    )
    return build_provider(settings)


async def test_news_scores_only_what_was_published_by_as_of(tmp_path: Path) -> None:
    market = _local_market(tmp_path)
    report = await run_analyst("news", market, "ACME", close_of("2012-03-30"))
    lexicon = lm_lexicon()
    assert {"strong", "gains", "improved", "excellent"} <= lexicon.positive
    assert {"losses", "decline"} <= lexicon.negative
    assert report.news_available and report.figures["headline_count"] == 3
    assert report.figures["positive_headlines"] == 2 and report.figures["negative_headlines"] == 1
    # 4 positive words against 2 negative: (4 - 2) / 6
    assert report.figures["sentiment_score"] == pytest.approx(2 / 6, abs=1e-3)
    assert report.signal == "bullish" and not any("fraud" in h for h in report.headlines)


async def test_fundamentals_use_statements_filed_by_as_of(tmp_path: Path) -> None:
    market = _local_market(tmp_path)
    report = await run_analyst("fundamentals", market, "ACME", close_of("2012-03-30"))
    assert report.fundamentals_available
    assert report.figures["revenue_annual"] == 130e6  # the 2013 filing is not known yet
    assert report.figures["revenue_annual_change_pct"] == pytest.approx(30.0)
    assert report.figures["net_margin_pct"] == pytest.approx(20.0)
    assert report.signal == "bullish" and str(report.last_filed) == "2012-02-14"


def test_trade_outcomes_and_lessons() -> None:
    index = pd.DatetimeIndex([datetime(2024, 1, d, 21, tzinfo=UTC) for d in (2, 3, 4, 5, 8, 9)])
    frame = pd.DataFrame(
        {
            "close": [100, 102, 97, 104, 108, 90],
            "high": [101, 103, 99, 105, 109, 95],
            "low": [99, 100, 96, 101, 104, 89],
        },
        index=index,
    )
    decided, end = index[0].to_pydatetime(), index[4].to_pydatetime()
    buy = {"action": "BUY", "stop": 96.5, "target": 108.5, "size_fraction": 0.2}
    outcome = trade_outcome(frame, decided, end, buy)
    assert outcome is not None
    assert outcome["return_pct"] == pytest.approx(8.0) and outcome["correct"]
    assert outcome["stop_hit"] and outcome["target_hit"]  # low 96 and high 109 in the window
    assert outcome["max_loss_pct"] == pytest.approx(-4.0) and outcome["max_gain_pct"] == 9.0
    sell = trade_outcome(frame, decided, end, {"action": "SELL", "stop": 110})
    assert sell is not None and not sell["correct"] and sell["position_return_pct"] == -8.0
    hold = trade_outcome(frame, decided, index[1].to_pydatetime(), {"action": "HOLD"})
    assert hold is not None and not hold["correct"]  # +2% is a move a HOLD missed
    assert lesson_of(outcome, 7).startswith("BUY was right: the stock moved +8.0% in 7 days")
    assert "missed a move" in lesson_of(hold, 1)
    assert trade_outcome(frame, index[-1].to_pydatetime(), end, buy) is None  # no bars after

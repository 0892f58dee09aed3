"""The whole desk offline: bundled real data, every agent's rules policy, the real graph."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
import talib

from alphadesk.config import DataSettings, Settings
from alphadesk.data import build_provider
from alphadesk.data.base import MarketData
from alphadesk.data.providers.sec_bundle import SecBundle
from alphadesk.pipelines.desk.report import render_report
from tests.pipelines.conftest import close_of
from tests.pipelines.desk.conftest import decide, write_local_bars

pytestmark = pytest.mark.slow

CASES = [
    ("NVDA", "2024-11-29"),
    ("KO", "2015-06-30"),
    ("AMZN", "2008-11-28"),
    ("AAPL", "2012-03-30"),
    ("MSFT", "2010-06-30"),
    ("XOM", "2020-03-31"),
]


async def test_decisions_follow_the_data_and_differ(settings: Settings, market: MarketData) -> None:
    decisions = {}
    for symbol, day in CASES:
        result = await decide(settings, market, symbol, day)
        assert result.decision in ("BUY", "HOLD", "SELL"), result.reason
        decisions[symbol] = result.decision
        final, market_report = result.final, result.market
        assert final is not None and market_report is not None and result.plan is not None
        # The numbers are the data's: RSI and the last close against TA-Lib on the bars.
        bars = market.daily_bars(
            symbol, close_of(day), start=(close_of(day) - timedelta(days=500)).date()
        )
        closes = bars.prices().to_numpy(dtype=float)
        assert result.facts["market.current_price"] == pytest.approx(closes[-1], rel=1e-3)
        expected_rsi = talib.RSI(closes, timeperiod=14)[-1]
        assert result.facts["market.rsi_14"] == pytest.approx(expected_rsi, abs=0.06)
        # The decision follows the evidence: a BUY rests on a bullish net view, a SELL on
        # a bearish one; their levels lie in the traded range around the last close.
        if final.action != "HOLD":
            sign = 1 if final.action == "BUY" else -1
            assert sign * market_report.score > 0
            assert result.plan.recommendation == final.action
            assert final.entry == pytest.approx(closes[-1], rel=1e-3)
            assert final.stop is not None and sign * (final.entry - final.stop) > 0
            assert final.target is not None and sign * (final.target - final.entry) > 0
            assert float(np.min(closes[-504:])) * 0.9 <= min(final.levels.values())
            assert max(final.levels.values()) <= float(np.max(closes[-504:])) * 1.1
        assert all(a.model == "rules" and a.outcome == "completed" for a in result.agents)
        # Offline, what the bundled data cannot say is said, not invented.
        assert result.news is not None and not result.news.news_available
        assert result.news.confidence == 0 and result.news.figures == {}
        # Fundamentals come from the bundled SEC archive where it holds the company.
        company = SecBundle.at().companies.get(symbol)
        filed = company is not None and company["facts_filed"][0] < day
        assert result.fundamentals is not None
        assert result.fundamentals.fundamentals_available is filed
        assert bool(result.fundamentals.figures) is filed
        assert any("social media" in item for item in result.data_missing)
    assert len(set(decisions.values())) >= 2, decisions
    assert decisions["AAPL"] == "BUY" and decisions["XOM"] == "SELL"


async def test_changing_the_bars_at_as_of_changes_the_decision(
    tmp_path: Path, market: MarketData
) -> None:
    symbol, day = "AAPL", "2012-03-30"
    as_of = close_of(day)
    bars = market.daily_bars(
        symbol, as_of + timedelta(days=60), start=(as_of - timedelta(days=700)).date()
    )
    frame = bars.frame.copy()
    # Mirror the last 70 sessions up to as_of around their first close: the rally becomes
    # a slide of the same size. Bars after as_of are left alone (never read).
    recent = (frame.index <= as_of) & (frame.index > frame.index[frame.index <= as_of][-70])
    pivot = float(frame.loc[recent, "close"].iloc[0])
    mirrored = frame.loc[recent].copy()
    for column in ("open", "close", "adj_close"):
        mirrored[column] = 2 * pivot - frame.loc[recent, column]
    mirrored["high"] = 2 * pivot - frame.loc[recent, "low"]
    mirrored["low"] = 2 * pivot - frame.loc[recent, "high"]
    frame.loc[recent] = mirrored
    root = tmp_path / "local"
    write_local_bars(root, symbol, frame)
    local = Settings(
        data_dir=tmp_path / "alphadesk",
        data=DataSettings(providers=["local"], local_dir=root),
    )
    original = await decide(local, build_provider(local), symbol, day, analysts=["market"])
    write_local_bars(root, symbol, bars.frame)  # the true bars again
    truth = Settings(
        data_dir=tmp_path / "truth", data=DataSettings(providers=["local"], local_dir=root)
    )
    true = await decide(truth, build_provider(truth), symbol, day, analysts=["market"])
    assert true.decision == "BUY"
    assert original.decision == "SELL", original.final
    assert original.market is not None and original.market.trend_direction == "down"


async def test_bars_after_as_of_change_nothing(tmp_path: Path, market: MarketData) -> None:
    symbol, day = "KO", "2015-06-30"
    as_of = close_of(day)
    bars = market.daily_bars(
        symbol, as_of + timedelta(days=90), start=(as_of - timedelta(days=800)).date()
    )
    later = bars.frame.copy()
    after = later.index > as_of
    later.loc[after, ["adj_close"]] = later.loc[after, ["adj_close"]] * 3  # a wild future
    root = tmp_path / "local"
    write_local_bars(root, symbol, later)
    local = Settings(
        data_dir=tmp_path / "a", data=DataSettings(providers=["local"], local_dir=root)
    )
    seen = await decide(local, build_provider(local), symbol, day, analysts=["market"])
    plain = Settings(data_dir=tmp_path / "b")
    unseen = await decide(plain, build_provider(plain), symbol, day, analysts=["market"])
    assert seen.final == unseen.final and seen.facts == unseen.facts


async def test_the_report_has_every_stage_and_the_chart(
    settings: Settings, market: MarketData, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    result = await decide(settings, market, "AAPL", "2012-03-30", run_dir=run_dir)
    report = render_report(result)
    for heading in (
        "# AAPL: BUY",
        "## Final decision (risk judge)",
        "## Chart",
        "### Market:",
        "### Sentiment:",
        "### News:",
        "### Fundamentals:",
        "## Investment debate",
        "**Bull**",
        "**Bear**",
        "## Investment plan (research manager)",
        "## Trader's proposal",
        "## Risk discussion",
        "**Risky**",
        "**Safe**",
        "**Neutral**",
        "## Who decided",
        "## Data missing",
    ):
        assert heading in report, heading
    assert result.chart == "chart_AAPL.png" and (run_dir / "chart_AAPL.png").is_file()
    assert f"![AAPL daily chart]({result.chart})" in report


async def test_without_the_market_analyst_the_trader_reads_the_levels_itself(
    settings: Settings, market: MarketData, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    result = await decide(
        settings, market, "AAPL", "2012-03-30", analysts=["news"], run_dir=run_dir
    )
    assert result.market is None and result.decision == "HOLD"  # nothing to go on
    trader = next(a for a in result.agents if a.agent == "trader")
    assert trader.tool_calls == 1  # find_support_resistance
    assert result.chart == "chart_AAPL.png"  # drawn by the desk when no analyst drew it

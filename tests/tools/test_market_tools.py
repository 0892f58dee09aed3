"""The market and fundamentals tools through the engine, on the bundled real data (and an
in-test provider of statement facts), checked against the bars themselves."""

from __future__ import annotations

import json
import math
from datetime import UTC, date, datetime, timedelta
from typing import Any

import numpy as np
import pandas as pd
import pytest

from alphadesk.agent import Agent, RunScope
from alphadesk.analytics.trend import trend_assessment
from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.bars import Bars
from alphadesk.data.base import DataKind, Provider
from alphadesk.data.calendar import end_of_day
from alphadesk.data.models import Fact, Fundamentals, Provenance
from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.llm.messages import text_of
from alphadesk.llm.testing import ScriptedModel, tool_calls
from alphadesk.tools.common import adjusted_frame, traded_frame
from alphadesk.tools.deps import ToolDeps
from alphadesk.tools.market import FUNDAMENTALS_TOOLS, MARKET_TOOLS

TOOLS = MARKET_TOOLS + FUNDAMENTALS_TOOLS
AFTER_CLOSE = datetime(2016, 6, 30, 20, 5, tzinfo=UTC)  # 16:05 New York
MIDDAY = datetime(2016, 6, 30, 17, tzinfo=UTC)  # 13:00 New York, market open


@pytest.fixture(scope="module")
def bundled() -> BundledProvider:
    return BundledProvider()


async def run(market: Any, *calls: tuple[str, dict[str, Any]], as_of: datetime) -> list[str]:
    agent = Agent(
        name="tester",
        instructions="Look.",
        output_type=str,
        toolset=TOOLS,
        max_turns=len(calls) + 1,
    )
    model = ScriptedModel([*(tool_calls(c) for c in calls), "done"])
    result = await agent.run(model, "go", deps=ToolDeps(market=market), scope=RunScope(as_of=as_of))
    assert result.ok, result.outcome
    return [text_of(r.messages[-1].content) for r in model.requests[1:]]


async def call(market: Any, name: str, args: dict[str, Any], as_of: datetime) -> dict[str, Any]:
    return json.loads((await run(market, (name, args), as_of=as_of))[0])


def closes(bundled: BundledProvider, symbol: str, as_of: datetime) -> Any:
    return bundled.daily_bars(symbol, as_of).prices()


# -- get_market_data -----------------------------------------------------------------------


async def test_market_data_after_the_close(bundled: BundledProvider) -> None:
    out = await call(bundled, "get_market_data", {}, AFTER_CLOSE)
    spx = closes(bundled, "^GSPC", AFTER_CLOSE)
    assert out["symbol"] == "^GSPC" and out["price_at"].startswith("2016-06-30T16:00")
    assert out["price"] == pytest.approx(spx.iloc[-1], abs=0.01)
    assert out["change"] == pytest.approx(spx.iloc[-1] - spx.iloc[-2], abs=0.01)
    assert out["change_pct"] == pytest.approx((spx.iloc[-1] / spx.iloc[-2] - 1) * 100, abs=0.01)
    # The VIX settles at 16:15: at 16:05 the run knows the previous day's level only.
    vix = closes(bundled, "^VIX", AFTER_CLOSE)
    assert vix.index[-1].date() == date(2016, 6, 29)
    assert out["volatility_source"] == "vix"
    assert out["volatility_level"] == pytest.approx(vix.iloc[-1])
    assert out["volatility_change"] == pytest.approx(vix.iloc[-1] - vix.iloc[-2], abs=0.01)
    assert out["market_open"] is False and "session" not in out
    assert out["next_open"] == "2016-07-01T13:30:00Z"
    assert out["as_of"] == "2016-06-30T20:05:00Z" and out["missing"] == []


async def test_market_data_during_the_session(bundled: BundledProvider) -> None:
    out = await call(bundled, "get_market_data", {"symbol": "^IXIC"}, MIDDAY)
    assert out["market_open"] is True and out["session"] == "2016-06-30"
    assert out["next_close"] == "2016-06-30T20:00:00Z"
    assert out["price_at"].startswith("2016-06-29")  # today's close is not known yet
    assert out["price"] == pytest.approx(closes(bundled, "^IXIC", MIDDAY).iloc[-1], abs=0.01)


async def test_realised_volatility_proxy_when_no_vix(bundled: BundledProvider) -> None:
    as_of = datetime(2012, 6, 29, 20, 30, tzinfo=UTC)  # the bundled VIX starts in 2014
    out = await call(bundled, "get_market_data", {}, as_of)
    assert out["volatility_source"] == "sp500_realized_vol_20d"
    spx = closes(bundled, "^GSPC", as_of).to_numpy()[-21:]
    hv = np.diff(np.log(spx)).std(ddof=1) * math.sqrt(252) * 100
    assert out["volatility_level"] == pytest.approx(hv, abs=0.01)
    assert "volatility_change" not in out
    assert any("^VIX" in m for m in out["missing"])


async def test_market_data_missing_everything_still_answers(bundled: BundledProvider) -> None:
    out = await call(bundled, "get_market_data", {}, datetime(2021, 6, 30, 20, tzinfo=UTC))
    assert "price" not in out and "volatility_level" not in out
    assert len(out["missing"]) == 3 and out["market_open"] is False


# -- stock_screener ------------------------------------------------------------------------


def test_both_frames_read_across_a_split_on_the_as_of_basis(
    bundled: BundledProvider,
) -> None:
    as_of = datetime(2005, 3, 15, 21, tzinfo=UTC)  # AAPL split 2-for-1 on 28 February 2005
    bars = bundled.daily_bars("AAPL", as_of, start=date(2004, 12, 1))
    assert "2:1 on 2005-02-28" in bars.basis
    traded, adjusted = traded_frame(bars), adjusted_frame(bars)
    split = traded.index.searchsorted(pd.Timestamp("2005-02-28", tz="America/New_York"))
    for frame in (traded, adjusted):  # earlier bars are in the shares of as_of: no gap
        assert 0.95 < frame["close"].iloc[split] / frame["close"].iloc[split - 1] < 1.05
    assert traded["close"].iloc[-1] == bars.prices().iloc[-1] == 40.96  # as traded
    factor = (bars.frame["adj_close"] / bars.frame["close"]).to_numpy()
    for column in ("open", "high", "low", "close"):
        assert np.allclose(adjusted[column], traded[column] * factor)
    assert adjusted["volume"].equals(traded["volume"])
    returns = np.diff(np.log(adjusted["close"].to_numpy()[-21:]))
    assert returns.std(ddof=1) * math.sqrt(252) < 0.6  # the split day would make it > 2


def test_the_traded_frame_drops_bars_with_a_gap_and_reads_an_adjusted_only_close(
    bundled: BundledProvider,
) -> None:
    bars = bundled.daily_bars("AAPL", datetime(2014, 3, 3, 21, tzinfo=UTC), start=date(2013, 6, 1))
    frame = bars.frame.copy()
    frame.iloc[3, frame.columns.get_loc("open")] = np.nan
    frame.iloc[7, frame.columns.get_loc("volume")] = np.nan
    gapped = Bars.create("AAPL", "1d", frame, bars.provenance)
    traded = traded_frame(gapped)
    assert list(traded.columns) == ["open", "high", "low", "close", "volume"]
    assert len(traded) == len(frame) - 2 and not traded.isna().to_numpy().any()
    assert frame.index[3] not in traded.index and frame.index[7] not in traded.index
    assert traded["close"].equals(frame["close"].drop(frame.index[[3, 7]]))
    ohlcv = ["open", "high", "low", "close", "volume"]
    assert traded.equals(frame[ohlcv].drop(frame.index[[3, 7]]))
    assert traded.index.name == frame.index.name
    adjusted_only = Bars.create("AAPL", "1d", bars.frame.drop(columns=["close"]), bars.provenance)
    assert traded_frame(adjusted_only)["close"].equals(bars.frame["adj_close"].rename("close"))
    assert traded_frame(bars).equals(bars.frame[["open", "high", "low", "close", "volume"]])


async def test_screener_returns_only_symbols_meeting_the_criteria(
    bundled: BundledProvider,
) -> None:
    criteria = {
        "min_price": 50,
        "trend": "up",
        "min_hv": 0.1,
        "max_hv": 0.3,
        "sort_by": "hv",
        "limit": 25,
    }
    text = (await run(bundled, ("stock_screener", criteria), as_of=AFTER_CLOSE))[0]
    assert len(text) < 8_000
    out = json.loads(text)
    rows = out["results"]
    with_bars = [c for c in bundled.coverage() if c.end is not None]  # every symbol with bars
    assert rows and out["matched"] == len(rows) and out["universe_size"] == len(with_bars)
    start = (AFTER_CLOSE - timedelta(days=420)).date()
    for row in rows:
        bars = bundled.daily_bars(row["symbol"], AFTER_CLOSE, start=start)
        frame = adjusted_frame(bars)
        assert row["asset_type"] in ("equity", "etf")
        assert row["price"] == pytest.approx(bars.prices().iloc[-1], abs=0.01)
        assert row["price"] >= 50
        logret = np.diff(np.log(frame["close"].to_numpy()[-21:]))
        assert row["hv"] == pytest.approx(logret.std(ddof=1) * math.sqrt(252), abs=1e-4)
        assert 0.1 <= row["hv"] <= 0.3
        assert trend_assessment(frame).direction == "up" == row["trend"]
    assert [r["hv"] for r in rows] == sorted((r["hv"] for r in rows), reverse=True)
    # Nothing that qualifies was left out: check every other symbol fails a criterion.
    chosen = {r["symbol"] for r in rows}
    for symbol in set(bundled.universe()) - chosen:
        try:
            bars = bundled.daily_bars(symbol, AFTER_CLOSE, start=start)
        except Exception:
            continue
        frame = adjusted_frame(bars)
        hv = np.diff(np.log(frame["close"].to_numpy()[-21:])).std(ddof=1) * math.sqrt(252)
        kind = bundled.instrument(symbol, AFTER_CLOSE).asset_type
        passes = (
            kind in ("equity", "etf")
            and bars.prices().iloc[-1] >= 50
            and 0.1 <= hv <= 0.3
            and trend_assessment(frame).direction == "up"
        )
        assert not passes, f"{symbol} meets the criteria but was not returned"


@pytest.mark.slow
async def test_screener_kinds_sorting_limit_and_retries(bundled: BundledProvider) -> None:
    texts = await run(
        bundled,
        ("stock_screener", {"asset_types": ["index"], "sort_by": "price", "ascending": True}),
        ("stock_screener", {"limit": 3, "sort_by": "change_1m"}),
        ("stock_screener", {"min_hv": 0.5, "max_hv": 0.2}),
        ("stock_screener", {"trend": "sideways-ish"}),
        ("stock_screener", {"symbols": ["MSFT", "NVDA", "AMZN"], "min_avg_volume": 1}),
        as_of=AFTER_CLOSE,
    )
    indices = json.loads(texts[0])
    # By price, lowest first: 16.6 < 2099 < 4843.
    assert [r["symbol"] for r in indices["results"]] == ["^VIX", "^GSPC", "^IXIC"]
    top = json.loads(texts[1])
    assert len(top["results"]) == 3 and top["matched"] > 3
    moves = [r["change_1m_pct"] for r in top["results"]]
    assert moves == sorted(moves, reverse=True)
    assert "min_hv (0.5) must not exceed max_hv (0.2)" in texts[2]
    assert "Invalid arguments for stock_screener" in texts[3]
    given = json.loads(texts[4])
    assert given["universe_size"] == 3
    assert {r["symbol"] for r in given["results"]} == {"NVDA", "AMZN"}  # MSFT ends in 2013
    assert any(s.startswith("MSFT:") for s in given["skipped"])


# -- get_fundamentals ----------------------------------------------------------------------

AS_OF = datetime(2021, 6, 30, 20, tzinfo=UTC)
PROV = Provenance(provider="fake", origin="observed", retrieved_at=AS_OF, source="facts")


def fact(
    concept: str,
    value: float,
    start: str | None,
    end: str,
    filed: str,
    form: str = "10-Q",
    unit: str = "USD",
) -> Fact:
    filed_day = date.fromisoformat(filed)
    return Fact(
        known_at=end_of_day(filed_day),
        concept=concept,
        unit=unit,
        value=value,
        start=date.fromisoformat(start) if start else None,
        end=date.fromisoformat(end),
        filed=filed_day,
        form=form,
    )


class FakeFacts(Provider):
    name = "fake"
    kinds = frozenset({DataKind.FUNDAMENTALS})

    def _fundamentals(self, symbol: str, as_of: datetime) -> Fundamentals:
        items = [
            fact("Revenues", 143.0e9, "2019-07-01", "2020-06-30", "2020-07-30", "10-K"),
            fact("Revenues", 168.0e9, "2020-07-01", "2021-06-30", "2021-07-29", "10-K"),
            fact("Revenues", 35.0e9, "2020-01-01", "2020-03-31", "2020-04-29"),
            fact("Revenues", 41.7e9, "2021-01-01", "2021-03-31", "2021-04-27"),
            fact("NetIncomeLoss", 44.3e9, "2019-07-01", "2020-06-30", "2020-07-30", "10-K"),
            fact("NetIncomeLoss", 15.5e9, "2021-01-01", "2021-03-31", "2021-04-27"),
            fact("StockholdersEquity", 130.0e9, None, "2021-03-31", "2021-04-27"),
            fact("LongTermDebtNoncurrent", 52.0e9, None, "2021-03-31", "2021-04-27"),
            fact("AssetsCurrent", 180.0e9, None, "2021-03-31", "2021-04-27"),
            fact("LiabilitiesCurrent", 90.0e9, None, "2021-03-31", "2021-04-27"),
            fact(
                "EarningsPerShareDiluted",
                1.95,
                "2021-01-01",
                "2021-03-31",
                "2021-04-27",
                unit="USD/shares",
            ),
        ]
        return Fundamentals(symbol=symbol, items=items, provenance=PROV)


async def test_fundamentals_by_filing_date() -> None:
    text = (
        await run(
            FakeFacts(clock=lambda: AS_OF), ("get_fundamentals", {"symbol": "MSFT"}), as_of=AS_OF
        )
    )[0]
    out = json.loads(text)
    assert "168000000000" not in text and "1.68e" not in text  # filed after as_of
    figures = {(f["name"], f["period"]): f for f in out["figures"]}
    annual = figures[("revenue", "annual")]
    assert annual["value"] == 143.0e9 and annual["period_end"] == "2020-06-30"
    quarter = figures[("revenue", "quarter")]
    assert quarter["value"] == 41.7e9 and quarter["year_ago"] == 35.0e9
    assert quarter["change_pct"] == pytest.approx((41.7 / 35.0 - 1) * 100, abs=0.01)
    assert figures[("eps_diluted", "quarter")]["value"] == 1.95
    assert out["net_margin_pct"] == pytest.approx(44.3 / 143.0 * 100, abs=1e-3)
    assert out["current_ratio"] == 2.0
    assert out["debt_to_equity"] == pytest.approx(52 / 130, abs=1e-3)
    assert out["last_filed"] == "2021-04-27" and out["available"] is True
    assert "gross_profit: not reported" in out["missing"]


async def test_fundamentals_absent_from_bundled_data(bundled: BundledProvider) -> None:
    out = await call(bundled, "get_fundamentals", {"symbol": "KO"}, AS_OF)
    assert out["available"] is False and out["missing"][0].startswith("fundamentals:")


async def test_a_listed_symbol_without_facts_is_missing_data_not_a_typo(
    bundled: BundledProvider,
) -> None:
    # The bundled facts suggest PFE for PEP, and the modeled options list no symbols of
    # their own; PEP's bars are listed, so its facts are missing, not its name mistyped.
    market = build_provider(Settings())
    out = await call(market, "get_fundamentals", {"symbol": "PEP"}, AS_OF)
    assert out["available"] is False and out["missing"][0].startswith("fundamentals:")
    typo = (await run(market, ("get_fundamentals", {"symbol": "PEPX"}), as_of=AS_OF))[0]
    assert "unknown symbol 'PEPX' (close matches: PEP" in typo

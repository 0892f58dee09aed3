"""The chart toolset through the agent engine, on the bundled real market data."""

from __future__ import annotations

import itertools
import json
import re
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from alphadesk.agent import Agent, RunResult, RunScope, ToolCrashed
from alphadesk.agent import events as ev
from alphadesk.data.chain import ProviderChain
from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.data.providers.local import LocalProvider
from alphadesk.llm.messages import ImagePart, ToolMessage, text_of
from alphadesk.llm.testing import ScriptedModel, answer, tool_calls
from alphadesk.tools.chart import CHART_TOOLS
from alphadesk.tools.chart.render import PNG_SIGNATURE
from alphadesk.tools.common import PERIODS, ToolOutput, period_start
from alphadesk.tools.deps import ToolDeps

AS_OF = datetime(2012, 6, 29, 21, tzinfo=UTC)  # a Friday after the close
MAX_JSON_BYTES = 4096
TOOL_NAMES = [
    "get_price_history",
    "calculate_swing_points",
    "calculate_fib_levels",
    "find_support_resistance",
    "calculate_trendline",
    "detect_chart_patterns",
    "get_technical_indicators",
    "render_chart",
]
_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})")


def largest_calls(symbol: str) -> list[tuple[str, dict[str, Any]]]:
    """One call of every tool, with the settings that give the largest outputs."""
    return [
        ("get_price_history", {"symbol": symbol, "period": "2y"}),
        ("calculate_swing_points", {"symbol": symbol, "period": "2y", "lookback": 1}),
        ("calculate_fib_levels", {"symbol": symbol, "period": "2y"}),
        ("find_support_resistance", {"symbol": symbol, "period": "2y", "num_levels": 5}),
        ("calculate_trendline", {"symbol": symbol, "kind": "resistance", "period": "2y"}),
        ("detect_chart_patterns", {"symbol": symbol, "period": "2y", "lookback": 2}),
        ("get_technical_indicators", {"symbol": symbol}),
        ("render_chart", {"symbol": symbol}),  # its JSON does not grow with the period
    ]


async def run_calls(
    deps: ToolDeps,
    *turns: list[tuple[str, dict[str, Any] | str]],
    as_of: datetime = AS_OF,
    on_event: Any = None,
) -> tuple[RunResult[str], ScriptedModel]:
    """Run a chart agent whose scripted model makes ``turns`` of tool calls, then answers."""
    model = ScriptedModel([*(tool_calls(*calls) for calls in turns), answer("done")])
    agent: Agent[ToolDeps, str] = Agent(
        name="chart_analyst",
        instructions="Analyse the daily chart.",
        output_type=str,
        toolset=CHART_TOOLS,
        max_turns=len(turns) + 2,
    )
    result = await agent.run(
        model, "Analyse the chart.", deps=deps, scope=RunScope(as_of=as_of, on_event=on_event)
    )
    return result, model


def replies(model: ScriptedModel, turn: int = 1) -> list[ToolMessage]:
    """The tool results the model received after its ``turn``-th request."""
    request = model.requests[turn].messages
    previous = len(model.requests[turn - 1].messages) + 1  # + the assistant's call turn
    return [m for m in request[previous:] if isinstance(m, ToolMessage)]


def payload(message: ToolMessage) -> dict[str, Any]:
    data = json.loads(text_of(message.content))
    assert isinstance(data, dict)
    return data


async def call(deps: ToolDeps, name: str, as_of: datetime = AS_OF, **args: Any) -> dict[str, Any]:
    """One successful tool call through the engine; its JSON result."""
    result, model = await run_calls(deps, [(name, args)], as_of=as_of)
    assert result.ok, result.outcome
    (reply,) = replies(model)
    return payload(reply)


def dates_in(value: Any) -> list[date]:
    """Every ISO date (or date-time) string anywhere in a JSON value."""
    if isinstance(value, dict):
        return [d for v in value.values() for d in dates_in(v)]
    if isinstance(value, list):
        return [d for v in value for d in dates_in(v)]
    if isinstance(value, str) and (match := _DATE.match(value)):
        return [date.fromisoformat(match.group(1))]
    return []


def files_in(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def closes(bundled: BundledProvider, symbol: str, as_of: datetime) -> pd.Series:
    bars = bundled.daily_bars(symbol, as_of)
    return bars.frame[bars.price_field()]


# -- the schema the model sees ----------------------------------------------------------


def test_toolset_schema_has_enums_bounds_and_descriptions() -> None:
    assert CHART_TOOLS.name == "chart" and CHART_TOOLS.names == TOOL_NAMES
    for spec in CHART_TOOLS.specs:
        params = spec.parameters
        assert spec.description and params["required"] == ["symbol"], spec.name
        assert params["additionalProperties"] is False
        for name, prop in params["properties"].items():
            assert prop.get("description"), f"{spec.name}.{name} has no description"
        if "period" in params["properties"]:
            assert params["properties"]["period"]["enum"] == list(PERIODS)
        assert "bars" not in params["properties"]  # bars never go through the model
    props = {s.name: s.parameters["properties"] for s in CHART_TOOLS.specs}
    assert props["calculate_swing_points"]["lookback"] | {"description": ""} == {
        "default": 5,
        "description": "",
        "maximum": 20,
        "minimum": 1,
        "type": "integer",
    }
    assert props["find_support_resistance"]["num_levels"]["maximum"] == 5
    assert props["calculate_trendline"]["kind"]["enum"] == ["support", "resistance"]
    assert props["get_price_history"]["interval"]["enum"] == ["1d", "1wk"]
    fib = props["calculate_fib_levels"]
    assert {"swing_high", "swing_low", "direction"} <= set(fib)
    indicators = props["get_technical_indicators"]["indicators"]["anyOf"][0]["items"]["enum"]
    assert {"rsi", "macd", "adx", "atr", "sma"} <= set(indicators)


async def test_invalid_arguments_go_back_as_retries(deps: ToolDeps) -> None:
    result, model = await run_calls(
        deps,
        [
            ("find_support_resistance", {"symbol": "MSFT", "period": "5y"}),
            ("calculate_swing_points", {"symbol": "MSFT", "lookback": 0}),
            ("get_technical_indicators", {"symbol": "MSFT", "indicators": ["astrology"]}),
            ("calculate_trendline", {"symbol": "MSFT", "bars": [1, 2, 3]}),
        ],
        [("find_support_resistance", {"symbol": "MSFT", "period": "1y"})],
    )
    assert result.ok, result.outcome
    errors = [text_of(r.content) for r in replies(model, 1)]
    assert all(e.startswith("Invalid arguments for") for e in errors), errors
    assert "period" in errors[0] and "'1mo'" in errors[0] and "'2y'" in errors[0]
    assert "lookback" in errors[1] and "greater than or equal to 1" in errors[1]
    assert "indicators" in errors[2] and "bars" in errors[3]
    assert payload(replies(model, 2)[0])["period"] == "1y"


# -- every tool: bounded, point in time, on real data -----------------------------------


@pytest.mark.parametrize(
    ("symbol", "as_of"),
    [
        ("MSFT", AS_OF),
        ("AAPL", datetime(2008, 10, 15, 21, tzinfo=UTC)),  # a crash: many levels above price
        ("NVDA", datetime(2024, 8, 30, 21, tzinfo=UTC)),
    ],
)
@pytest.mark.slow
async def test_every_tool_is_bounded_and_point_in_time(
    deps: ToolDeps, bundled: BundledProvider, symbol: str, as_of: datetime
) -> None:
    ends = {c.symbol: c.end for c in bundled.coverage()}
    assert ends[symbol] > as_of.date()  # the provider holds later bars: the cut matters
    result, model = await run_calls(deps, largest_calls(symbol), as_of=as_of)
    assert result.ok, result.outcome
    results = replies(model)
    assert [r.name for r in results] == TOOL_NAMES
    last_close = float(closes(bundled, symbol, as_of).iloc[-1])
    for reply in results:
        text = text_of(reply.content)
        assert len(text.encode()) <= MAX_JSON_BYTES, f"{reply.name}: {len(text)} bytes"
        data = payload(reply)
        ToolOutput.model_validate({k: data[k] for k in ("symbol", "as_of", "missing")})
        assert data["symbol"] == symbol and data["as_of"].startswith(as_of.date().isoformat())
        source = data["source"]
        assert (source["provider"], source["origin"]) == ("bundled", "observed")
        assert source["basis"].startswith(f"as traded on {as_of.date().isoformat()};")
        assert data["missing"] == [], f"{reply.name}: {data['missing']}"
        assert max(dates_in(data)) <= as_of.date(), reply.name
        if "current_price" in data:
            assert data["current_price"] == pytest.approx(last_close, rel=1e-3), reply.name


async def test_price_history_summarises_the_bars(deps: ToolDeps, bundled: BundledProvider) -> None:
    data = await call(deps, "get_price_history", symbol="msft", period="3mo")
    frame = bundled.daily_bars("MSFT", AS_OF, start=date(2012, 3, 29)).frame
    assert data["symbol"] == "MSFT" and data["bars"] == len(frame)
    assert data["first_date"] == "2012-03-29" and data["last_date"] == "2012-06-29"
    assert data["current_price"] == 30.59 and data["period_high"] == frame["high"].max()
    assert data["period_low"] == frame["low"].min() == 28.32
    assert data["period_low_date"] == "2012-06-04"
    expected = 100 * (frame["close"].iloc[-1] / frame["close"].iloc[0] - 1)
    assert data["change_pct"] == pytest.approx(expected, abs=0.01)
    assert data["avg_volume"] == pytest.approx(frame["volume"].mean(), abs=1)
    tail = data["tail"]
    assert len(tail) == 20 and tail[-1] == {
        "date": "2012-06-29",
        "open": 30.45,
        "high": 30.69,
        "low": 30.14,
        "close": 30.59,
        "volume": 55227200,
    }

    weekly = await call(deps, "get_price_history", symbol="MSFT", interval="1wk")
    weeks = weekly["tail"]
    assert len(weeks) == 20 and weeks[-1]["date"] == "2012-06-29"
    last_week = frame.loc["2012-06-25":"2012-06-29"]
    assert weeks[-1]["high"] == pytest.approx(last_week["high"].max(), abs=0.005)
    assert weeks[-1]["open"] == pytest.approx(last_week["open"].iloc[0], abs=0.005)
    assert weeks[-1]["volume"] == last_week["volume"].sum()
    assert all(date.fromisoformat(w["date"]).weekday() <= 4 for w in weeks)


async def test_as_of_cuts_the_data(deps: ToolDeps, bundled: BundledProvider) -> None:
    earlier = datetime(2012, 6, 15, 21, tzinfo=UTC)
    data = await call(deps, "get_price_history", as_of=earlier, symbol="MSFT")
    assert data["last_date"] == "2012-06-15"
    assert data["current_price"] == closes(bundled, "MSFT", earlier).iloc[-1] == 30.02
    later = await call(deps, "get_technical_indicators", as_of=earlier, symbol="MSFT")
    assert later["last_date"] == "2012-06-15" and later["current_price"] == 30.02


# -- levels are consistent with the prices ----------------------------------------------


@pytest.mark.parametrize(
    ("symbol", "as_of", "period"),
    [
        ("MSFT", AS_OF, "6mo"),
        ("AAPL", datetime(2008, 10, 15, 21, tzinfo=UTC), "1y"),
        ("NVDA", datetime(2024, 8, 30, 21, tzinfo=UTC), "3mo"),
        ("^GSPC", datetime(2018, 12, 31, 23, tzinfo=UTC), "2y"),
    ],
)
async def test_support_below_resistance_above_inside_the_range(
    deps: ToolDeps, symbol: str, as_of: datetime, period: str
) -> None:
    result, model = await run_calls(
        deps,
        [
            ("find_support_resistance", {"symbol": symbol, "period": period, "num_levels": 4}),
            ("get_price_history", {"symbol": symbol, "period": period}),
        ],
        as_of=as_of,
    )
    assert result.ok
    sr, history = (payload(r) for r in replies(model))
    price, low, high = history["current_price"], history["period_low"], history["period_high"]
    assert sr["current_price"] == price
    assert (sr["period_low"], sr["period_high"]) == (low, high)
    assert sr["support"] or sr["resistance"]
    assert len(sr["support"]) <= 4 and len(sr["resistance"]) <= 4
    for level in sr["support"]:
        assert level["kind"] == "support" and low <= level["price"] < price
        assert level["distance_pct"] < 0 and level["distance_atr"] < 0
    for level in sr["resistance"]:
        assert level["kind"] == "resistance" and price <= level["price"] <= high
    for side in ("support", "resistance"):
        distances = [abs(lv["distance_pct"]) for lv in sr[side]]
        assert distances == sorted(distances), "nearest first"
        for level in sr[side]:
            assert level["low"] <= level["price"] <= level["high"] and level["touches"] >= 1
            assert level["strength"] in ("strong", "moderate", "weak")
    if sr["support"]:
        assert sr["nearest_support"] == sr["support"][0]["price"]
        ext = sr["extension"]
        assert ext["support"] == sr["nearest_support"] and ext["support_source"] == "zone"
        assert ext["atr_multiple"] == pytest.approx((price - ext["support"]) / sr["atr"], abs=0.02)
        assert ext["risk"] == (
            "low"
            if ext["atr_multiple"] < 1.5
            else "moderate"
            if ext["atr_multiple"] < 3
            else "high"
        )
    for zone in sr["confluence"]:
        assert len(zone["families"]) >= 2
        assert (zone["price"] < price) == (zone["kind"] == "support")


@pytest.mark.parametrize(
    ("symbol", "as_of", "direction"),
    [
        ("MSFT", AS_OF, "up"),
        ("AAPL", datetime(2008, 12, 31, 23, tzinfo=UTC), "down"),
    ],
)
async def test_fib_levels_are_monotone_and_span_the_period_swing(
    deps: ToolDeps, symbol: str, as_of: datetime, direction: str
) -> None:
    result, model = await run_calls(
        deps,
        [
            ("calculate_fib_levels", {"symbol": symbol, "period": "1y"}),
            ("get_price_history", {"symbol": symbol, "period": "1y"}),
            ("calculate_swing_points", {"symbol": symbol, "period": "1y"}),
        ],
        as_of=as_of,
    )
    assert result.ok
    fib, history, swings = (payload(r) for r in replies(model))
    assert fib["swing_source"] == "detected" and fib["direction"] == direction
    assert (fib["swing_high"], fib["swing_low"]) == (history["period_high"], history["period_low"])
    major = swings["major_swing"]
    assert (major["high"], major["low"], major["direction"]) == (
        fib["swing_high"],
        fib["swing_low"],
        fib["direction"],
    )
    assert (fib["swing_low_date"] < fib["swing_high_date"]) == (direction == "up")
    retr = fib["retracements"]
    assert [lv["label"] for lv in retr] == ["0%", "23.6%", "38.2%", "50%", "61.8%", "78.6%", "100%"]
    prices = [lv["price"] for lv in retr]
    step = np.diff(prices)
    assert (step < 0).all() if direction == "up" else (step > 0).all()
    end, start = (
        (fib["swing_high"], fib["swing_low"])
        if direction == "up"
        else (fib["swing_low"], fib["swing_high"])
    )
    assert (prices[0], prices[-1]) == (end, start)
    ext = [lv["price"] for lv in fib["extensions"]]
    assert ext and all(np.diff(ext) > 0 if direction == "up" else np.diff(ext) < 0)
    price = fib["current_price"]
    assert fib["nearest_below"]["price"] < price < fib["nearest_above"]["price"]
    assert 0 <= fib["retraced_pct"] <= 100


async def test_fib_levels_from_explicit_swing_prices(deps: ToolDeps) -> None:
    swings = await call(deps, "calculate_swing_points", symbol="MSFT", period="3mo")
    high, low = swings["last_swing_high"]["price"], swings["last_swing_low"]["price"]
    result, model = await run_calls(
        deps,
        [
            (
                "calculate_fib_levels",
                {"symbol": "MSFT", "swing_high": 40.0, "swing_low": 20.0, "direction": "up"},
            ),
            ("calculate_fib_levels", {"symbol": "MSFT", "swing_high": high, "swing_low": low}),
        ],
        [
            (
                "calculate_fib_levels",
                {"symbol": "MSFT", "swing_high": high, "swing_low": low, "direction": "up"},
            )
        ],
    )
    assert result.ok
    invented, no_direction = (text_of(r.content) for r in replies(model, 1))
    assert "traded between 25.86 and 32.95" in invented
    assert "direction" in no_direction
    fib = payload(replies(model, 2)[0])
    assert fib["swing_source"] == "given" and "swing_high_date" not in fib
    assert (fib["swing_high"], fib["swing_low"]) == (high, low)
    assert fib["retracements"][4]["price"] == pytest.approx(high - 0.618 * (high - low), abs=0.01)


async def test_swing_points_alternate_and_lie_in_the_range(deps: ToolDeps) -> None:
    result, model = await run_calls(
        deps,
        [
            ("calculate_swing_points", {"symbol": "AAPL", "period": "1y", "lookback": 3}),
            ("get_price_history", {"symbol": "AAPL", "period": "1y"}),
        ],
    )
    assert result.ok
    swings, history = (payload(r) for r in replies(model))
    points = swings["points"]
    assert 4 <= len(points) <= 20 and swings["price_basis"] == "high_low"
    kinds = [p["kind"] for p in points]
    assert all(a != b for a, b in itertools.pairwise(kinds)), "alternating"
    assert [p["date"] for p in points] == sorted(p["date"] for p in points)
    assert all(history["period_low"] <= p["price"] <= history["period_high"] for p in points)
    assert swings["last_swing_high"]["kind"] == "high"
    assert swings["structure"] in (
        None,
        "higher_highs_higher_lows",
        "lower_highs_lower_lows",
        "higher_highs_lower_lows",
        "lower_highs_higher_lows",
    )


async def test_trendline_and_a_period_too_short_for_it(deps: ToolDeps) -> None:
    result, model = await run_calls(
        deps,
        [("calculate_trendline", {"symbol": "MSFT", "period": "1mo", "lookback": 10})],
        [("calculate_trendline", {"symbol": "MSFT", "period": "6mo", "lookback": 5})],
    )
    assert result.ok
    retry = text_of(replies(model, 1)[0].content)
    assert "not enough data" in retry and "period='3mo'" in retry
    line = payload(replies(model, 2)[0])
    assert line["found"] is True and line["kind"] == "support"
    assert line["direction"] in ("rising", "falling", "flat") and 0 <= line["r2"] <= 1
    assert 2 <= line["pivots"] <= 5 and line["start_date"] < "2012-06-29"
    assert line["distance_pct"] == pytest.approx(
        100 * (line["current_price"] / line["value_now"] - 1), abs=0.05
    )
    assert line["broken"] == (line["distance_atr"] < -0.5)


async def test_patterns_and_candlesticks(deps: ToolDeps) -> None:
    data = await call(deps, "detect_chart_patterns", symbol="MSFT", period="6mo")
    assert data["patterns_found"] >= len(data["patterns"]) >= 1
    confidences = [p["confidence"] for p in data["patterns"]]
    assert confidences == sorted(confidences, reverse=True)
    for p in data["patterns"]:
        assert 0 <= p["confidence"] <= 1 and p["status"] in ("forming", "confirmed")
        assert p["start_date"] <= p["end_date"] <= "2012-06-29"
    assert all(0 <= c["bars_ago"] < 5 for c in data["candlesticks"])


async def test_indicators_selection_trend_and_values(
    deps: ToolDeps, bundled: BundledProvider
) -> None:
    full = await call(deps, "get_technical_indicators", symbol="MSFT")
    close = closes(bundled, "MSFT", AS_OF)
    assert full["sma_20"] == pytest.approx(close.iloc[-20:].mean(), abs=0.01)
    assert full["sma_200"] == pytest.approx(close.iloc[-200:].mean(), abs=0.01)
    assert full["above_sma_200"] == (close.iloc[-1] > full["sma_200"])
    assert 0 <= full["rsi_14"] <= 100 and full["rsi_state"] == "neutral"
    trend = full["trend"]
    assert trend["direction"] in ("up", "down", "sideways") and trend["adx"] == full["adx_14"]
    assert trend["quality"] in ("strong", "moderate", "weak") and "sma_200" in trend["basis"]
    assert 10 < full["hv_20"] < 60, "annualised volatility in percent"

    only = await call(deps, "get_technical_indicators", symbol="MSFT", indicators=["rsi"])
    assert only["rsi_14"] == full["rsi_14"] and only["trend"] == trend
    assert not {"sma_20", "macd", "adx_14", "atr_14"} & set(only)


async def test_short_history_says_what_is_missing(deps: ToolDeps) -> None:
    # FB listed on 2012-05-18: 30 sessions at AS_OF, too few for a 50-bar average.
    data = await call(deps, "get_technical_indicators", symbol="FB")
    assert "trend" not in data and "sma_50" not in data and data["sma_20"] > 0
    assert any(m.startswith("trend: not enough data") for m in data["missing"])
    assert any(m.startswith("sma_200") for m in data["missing"])
    # The history starts inside every period: no retry, a clear "not found" instead.
    line = await call(deps, "calculate_trendline", symbol="FB", period="2y")
    assert line["found"] is False and "not enough data" in line["missing"][0]


# -- errors and missing data ------------------------------------------------------------


async def test_unknown_symbol_is_a_retry_naming_close_matches(deps: ToolDeps) -> None:
    result, model = await run_calls(
        deps,
        [
            ("get_price_history", {"symbol": "MSFTT"}),
            ("find_support_resistance", {"symbol": "GOOGL"}),
            ("calculate_swing_points", {"symbol": "MS FT"}),
        ],
        [("get_price_history", {"symbol": "MSFT"})],
    )
    assert result.ok, result.outcome
    msft, googl, malformed = (text_of(r.content) for r in replies(model, 1))
    assert "unknown symbol 'MSFTT'" in msft and "close matches: MSFT" in msft
    assert "GOOG" in googl
    assert "characters a ticker cannot have" in malformed
    assert payload(replies(model, 2)[0])["symbol"] == "MSFT"


async def test_data_the_model_cannot_fix_fails_the_run_clearly(deps: ToolDeps) -> None:
    # The bundled ^VIX series starts in 2014: nothing at AS_OF, whatever the model does.
    result, _ = await run_calls(deps, [("get_price_history", {"symbol": "^VIX"})])
    assert isinstance(result.outcome, ToolCrashed)
    assert result.outcome.tool == "get_price_history"
    assert "no 1d bar had closed" in result.outcome.error and "2014-01-03" in result.outcome.error


@pytest.mark.slow
async def test_close_only_series_states_what_is_missing(deps: ToolDeps) -> None:
    as_of = datetime(2021, 6, 30, 21, tzinfo=UTC)  # KO: adjusted closes only
    result, model = await run_calls(
        deps,
        [
            (
                name,
                {"symbol": "KO"} | ({"period": "1y"} if name != "get_technical_indicators" else {}),
            )
            for name in TOOL_NAMES
        ],
        as_of=as_of,
    )
    assert result.ok, result.outcome
    by_name = {r.name: (payload(r), r) for r in replies(model)}
    for name, (data, _) in by_name.items():
        assert any(m.startswith("high/low: close-only series") for m in data["missing"]), name
        assert (
            "volume" in data["missing"] and "close: the adjusted close is used" in data["missing"]
        ), name
    swings = by_name["calculate_swing_points"][0]
    assert swings["price_basis"] == "close" and "swing points use closes" in swings["missing"][0]
    assert by_name["find_support_resistance"][0]["support"]
    assert (
        "candlesticks: need open, high, low and close"
        in by_name["detect_chart_patterns"][0]["missing"]
    )
    indicators = by_name["get_technical_indicators"][0]
    assert "adx_14" not in indicators and indicators["rsi_14"] > 0
    assert "adx" not in indicators["trend"] and "adx_14" not in indicators["trend"]["basis"]
    history = by_name["get_price_history"][0]
    assert "avg_volume" not in history and set(history["tail"][-1]) == {"date", "close"}
    drawn = by_name["render_chart"][0]
    assert drawn["missing"] == [
        "high/low: close-only series, a line of closes is drawn",
        "open",
        "close: the adjusted close is used",
        "volume",
    ]
    assert drawn["support_levels"] and drawn["fib_levels"]
    chart = by_name["render_chart"][1]
    assert isinstance(chart.content, list) and chart.content[1].data.startswith(PNG_SIGNATURE)

    vix = await call(
        deps, "calculate_swing_points", as_of=datetime(2018, 6, 29, 21, tzinfo=UTC), symbol="^VIX"
    )
    assert vix["price_basis"] == "close"
    assert vix["missing"] == [
        "high/low: close-only series, swing points use closes",
        "open",
        "volume",
    ]


@pytest.fixture
def halted(tmp_path: Path) -> LocalProvider:
    """A halted stock: 30 sessions at one price (a local file, read by the real provider)."""
    folder = tmp_path / "local" / "bars" / "1d"
    folder.mkdir(parents=True)
    days = pd.bdate_range("2024-05-01", periods=30)
    pd.DataFrame(
        {
            "date": days.strftime("%Y-%m-%d"),
            "open": 50.0,
            "high": 50.0,
            "low": 50.0,
            "close": 50.0,
            "volume": 1000.0,
        }
    ).to_csv(folder / "HALT.csv", index=False)
    return LocalProvider(tmp_path / "local")


async def test_flat_short_series_never_crashes(halted: LocalProvider) -> None:
    deps = ToolDeps(market=halted, run_dir=None)
    as_of = datetime(2024, 6, 12, 21, tzinfo=UTC)
    result, model = await run_calls(
        deps,
        [
            (
                name,
                {"symbol": "HALT"}
                | ({"period": "3mo"} if name != "get_technical_indicators" else {}),
            )
            for name in TOOL_NAMES
        ],
        as_of=as_of,
    )
    assert result.ok, result.outcome
    by_name = {r.name: r for r in replies(model)}
    fib = text_of(by_name["calculate_fib_levels"].content)
    assert "not enough data" in fib and "price range" in fib  # a retry, not a crash
    data = {n: payload(r) for n, r in by_name.items() if n != "calculate_fib_levels"}
    assert data["get_price_history"]["change_pct"] == 0
    assert data["calculate_swing_points"]["points"] == []
    assert (
        "swing points: none in the period (no price movement)"
        in data["calculate_swing_points"]["missing"]
    )
    sr = data["find_support_resistance"]
    assert sr["support"] == [] and sr["resistance"] == [] and "extension" not in sr
    assert data["calculate_trendline"]["found"] is False
    assert "trend" not in data["get_technical_indicators"]
    assert data["render_chart"]["support_levels"] == [] and "file" not in data["render_chart"]
    assert any(m.startswith("fib not drawn") for m in data["render_chart"]["missing"])


# -- the chart image --------------------------------------------------------------------


async def test_render_chart_sends_the_image_and_saves_it(deps: ToolDeps) -> None:
    events: list[Any] = []
    result, model = await run_calls(
        deps,
        [
            ("render_chart", {"symbol": "msft"}),
            ("find_support_resistance", {"symbol": "MSFT", "num_levels": 3}),
            ("calculate_fib_levels", {"symbol": "MSFT"}),
        ],
        on_event=events.append,
    )
    assert result.ok
    chart, sr, fib = replies(model)
    assert isinstance(chart.content, list) and len(chart.content) == 2
    image = chart.content[1]
    assert isinstance(image, ImagePart) and image.media_type == "image/png"
    assert image.data.startswith(PNG_SIGNATURE) and len(image.data) > 10_000
    summary, levels, fibs = payload(chart), payload(sr), payload(fib)
    assert summary["file"] == "chart_MSFT.png"
    assert deps.run_dir is not None
    assert (deps.run_dir / "chart_MSFT.png").read_bytes() == image.data
    assert summary["support_levels"] == [lv["price"] for lv in levels["support"]]
    assert summary["resistance_levels"] == [lv["price"] for lv in levels["resistance"]]
    assert summary["fib_levels"] == {lv["label"]: lv["price"] for lv in fibs["retracements"]}
    assert summary["trendline"]["value_now"] > 0
    finished = [e for e in events if isinstance(e, ev.ToolFinished) and e.tool == "render_chart"]
    assert finished[0].images == 1


async def test_render_chart_without_a_run_dir_saves_nothing(
    bundled: BundledProvider, tmp_path: Path
) -> None:
    deps = ToolDeps(market=bundled, run_dir=None)
    data = await call(
        deps,
        "render_chart",
        symbol="AAPL",
        period="1mo",
        show_fib=False,
        show_levels=False,
        show_trendline=False,
    )
    assert "file" not in data and data["support_levels"] == [] and data["fib_levels"] == {}
    assert "trendline" not in data and files_in(tmp_path) == []
    assert data["bars"] == len(bundled.daily_bars("AAPL", AS_OF, start=date(2012, 5, 29)))


# -- the shared helpers of tools/common.py ----------------------------------------------


def test_period_start_covers_the_period_and_the_warmup() -> None:
    assert [period_start(AS_OF, p) for p in PERIODS] == [
        date(2012, 5, 29),
        date(2012, 3, 29),
        date(2011, 12, 29),
        date(2011, 6, 29),
        date(2010, 6, 29),
    ]
    # 200 sessions of warm-up are about 290 calendar days: enough for a 200-bar average.
    assert (period_start(AS_OF, "1y") - period_start(AS_OF, "1y", warmup_bars=200)).days == 310


async def test_unknown_symbol_surfaces_when_no_complete_listing_exists(
    bundled: BundledProvider,
) -> None:
    # An unconfigured local provider lists nothing: an absent symbol may exist there, so
    # only a close match makes the error the model's to fix.
    deps = ToolDeps(market=ProviderChain([bundled, LocalProvider(None)]))
    result, model = await run_calls(
        deps,
        [("get_price_history", {"symbol": "MSFTT"})],
        [("get_price_history", {"symbol": "ZZZZZZ"})],
    )
    assert "close matches: MSFT" in text_of(replies(model, 1)[0].content)
    assert isinstance(result.outcome, ToolCrashed)
    assert "no provider had daily bars" in result.outcome.error


async def test_unknown_symbol_without_close_match_is_a_retry_on_complete_listings(
    deps: ToolDeps,
) -> None:
    result, model = await run_calls(
        deps,
        [("get_price_history", {"symbol": "ZZZZZZ"})],
        [("get_price_history", {"symbol": "IBM"})],
    )
    assert result.ok
    retry = text_of(replies(model, 1)[0].content)
    assert "unknown symbol 'ZZZZZZ' (no close match)" in retry

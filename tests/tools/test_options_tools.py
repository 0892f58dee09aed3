"""The options tools through the engine, on the bundled real bars and the modeled chain.

Numbers are checked against independent references: returns by hand, Greeks and prices
with py_vollib, volatility with numpy, filters against the raw chain.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, date, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from py_vollib.black_scholes import black_scholes
from py_vollib.black_scholes.greeks import analytical
from scipy.stats import norm

from alphadesk.agent import Agent, RunScope
from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.base import DataKind, MarketData, Provider
from alphadesk.data.models import OptionChain
from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.llm.messages import ToolMessage, text_of
from alphadesk.llm.testing import ScriptedModel, tool_calls
from alphadesk.tools.deps import ToolDeps
from alphadesk.tools.options import OPTIONS_TOOLS

AS_OF = datetime(2012, 6, 29, 20, tzinfo=UTC)  # MSFT at 30.59, after the close
AMZN_AS_OF = datetime(2016, 6, 30, 20, tzinfo=UTC)  # AMZN near 715: many strikes
CONTRACT_FIELDS = {
    "expiration",
    "strike",
    "type",
    "dte",
    "bid",
    "ask",
    "mid",
    "delta",
    "gamma",
    "theta",
    "vega",
    "iv",
    "volume",
    "open_interest",
    "spread_pct",
    "weekly_roc",
    "annualized_roc",
}


@pytest.fixture(scope="module")
def market(tmp_path_factory: pytest.TempPathFactory) -> MarketData:
    """The default provider chain: bundled bars, modeled option chains."""
    return build_provider(Settings(data_dir=tmp_path_factory.mktemp("data")))


async def run_tool(
    market: Any, *calls: tuple[str, dict[str, Any]], as_of: datetime = AS_OF
) -> tuple[list[str], ScriptedModel]:
    """Script one tool call per turn, then a final answer; return the tool replies."""
    agent = Agent(
        name="tester",
        instructions="Use the tools.",
        output_type=str,
        toolset=OPTIONS_TOOLS,
        max_turns=len(calls) + 1,
    )
    model = ScriptedModel([*(tool_calls(c) for c in calls), "done"])
    result = await agent.run(
        model, "Analyse", deps=ToolDeps(market=market), scope=RunScope(as_of=as_of)
    )
    assert result.ok, result.outcome
    replies = [text_of(r.messages[-1].content) for r in model.requests[1:]]
    assert all(isinstance(r.messages[-1], ToolMessage) for r in model.requests[1:])
    return replies, model


async def call(market: Any, name: str, args: dict[str, Any], **kw: Any) -> dict[str, Any]:
    replies, _ = await run_tool(market, (name, args), **kw)
    return json.loads(replies[0])


def last_close(symbol: str, as_of: datetime) -> float:
    return float(BundledProvider().daily_bars(symbol, as_of).prices().iloc[-1])


# -- schemas and validation ----------------------------------------------------------------


def test_schemas_the_model_sees() -> None:
    assert OPTIONS_TOOLS.names == [
        "get_option_chain",
        "get_option_greeks",
        "calculate_iv_hv",
        "calculate_roc",
        "filter_options",
    ]
    chain = OPTIONS_TOOLS.get("get_option_chain")
    assert chain is not None
    props = chain.spec.parameters["properties"]
    assert chain.spec.parameters["required"] == ["symbol"]
    assert props["option_type"]["enum"] == ["put", "call", "both"]
    assert props["dte_min"]["minimum"] == 0 and props["strikes_per_side"]["maximum"] == 5
    assert "negative for puts" in chain.spec.description
    filt = OPTIONS_TOOLS.get("filter_options")
    assert filt is not None
    fprops = filt.spec.parameters["properties"]
    assert fprops["delta_min"]["minimum"] == 0 and fprops["delta_max"]["maximum"] == 1
    assert "options" not in fprops  # criteria in, never an array of contracts
    assert "|delta|" in filt.spec.description
    roc = OPTIONS_TOOLS.get("calculate_roc")
    assert roc is not None and roc.spec.parameters["required"] == ["premium", "strike", "dte"]
    for item in OPTIONS_TOOLS:
        for name, prop in item.spec.parameters["properties"].items():
            assert prop.get("description"), f"{item.name}.{name} has no description"


async def test_invalid_values_go_back_as_retries(market: MarketData) -> None:
    replies, _ = await run_tool(
        market,
        ("get_option_chain", {"symbol": "MSFT", "dte_min": -3}),
        ("get_option_chain", {"symbol": "MSFT", "dte_min": 40, "dte_max": 10}),
        ("filter_options", {"symbol": "MSFT", "delta_min": 0.4, "delta_max": 0.2}),
        ("calculate_roc", {"premium": 1.0, "strike": 50, "dte": 0}),
        ("calculate_roc", {"premium": 60, "strike": 50, "dte": 10}),
        ("get_option_greeks", {"symbol": "MSFT", "contract_symbols": ["not-a-symbol"]}),
    )
    assert "Invalid arguments for get_option_chain" in replies[0] and "dte_min" in replies[0]
    assert "must not exceed" in replies[1]
    assert "delta_min (0.4) must not exceed delta_max (0.2)" in replies[2]
    assert "Invalid arguments for calculate_roc" in replies[3] and "dte" in replies[3]
    assert "below the strike" in replies[4]
    assert "not an OCC option symbol" in replies[5]


async def test_unknown_symbol_is_a_retry_naming_the_close_match(market: MarketData) -> None:
    replies, _ = await run_tool(market, ("get_option_chain", {"symbol": "MSF"}))
    assert "unknown symbol 'MSF'" in replies[0] and "MSFT" in replies[0]


async def test_no_chain_is_reported_as_missing_not_a_crash(market: MarketData) -> None:
    out = await call(
        market,
        "get_option_chain",
        {"symbol": "BTC-USD"},
        as_of=datetime(2021, 6, 30, 20, tzinfo=UTC),
    )
    assert out["available"] is False and out["expirations"] == []
    assert "option chain" in out["missing"][0] and "BTC-USD" in out["missing"][0]


# -- get_option_chain ----------------------------------------------------------------------


async def test_chain_is_bounded_near_the_money_and_point_in_time(market: MarketData) -> None:
    replies, _ = await run_tool(market, ("get_option_chain", {"symbol": "AMZN"}), as_of=AMZN_AS_OF)
    assert len(replies[0]) < 20_000, f"{len(replies[0])} characters"
    out = json.loads(replies[0])
    assert out["as_of"] == "2016-06-30T20:00:00Z" and out["symbol"] == "AMZN"
    assert out["source"] == {"provider": "modeled", "origin": "modeled", "basis": ""}
    spot = last_close("AMZN", AMZN_AS_OF)
    assert out["underlying_price"] == pytest.approx(spot)
    views = out["expirations"]
    assert views and all(7 <= v["dte"] <= 60 for v in views)
    assert [v["expiration"] for v in views] == sorted(v["expiration"] for v in views)
    assert all(date.fromisoformat(v["expiration"]) > AMZN_AS_OF.date() for v in views)
    listed = [v for v in views if v["contracts"]]
    assert len(listed) == 4  # max_expirations
    for view in listed:
        strikes = sorted({c["strike"] for c in view["contracts"]})
        assert len([k for k in strikes if k < spot]) == 3
        assert len([k for k in strikes if k >= spot]) == 3
        assert view["strikes_listed"] > 6  # the rest of the chain is not sent
        assert 0.05 < view["atm_iv"] < 1.0 and view["expected_move"] > 0
        for c in view["contracts"]:
            assert set(c) >= CONTRACT_FIELDS
            assert (c["delta"] < 0) == (c["type"] == "put")
            assert c["mid"] == pytest.approx((c["bid"] + c["ask"]) / 2, abs=1e-3)
            assert c["spread_pct"] == pytest.approx(
                (c["ask"] - c["bid"]) / c["mid"] * 100, abs=0.01
            )


async def test_chain_filters_by_type_and_window(market: MarketData) -> None:
    out = await call(
        market,
        "get_option_chain",
        {
            "symbol": "MSFT",
            "dte_min": 20,
            "dte_max": 50,
            "option_type": "put",
            "strikes_per_side": 1,
            "max_expirations": 1,
        },
    )
    views = out["expirations"]
    assert all(20 <= v["dte"] <= 50 for v in views)
    assert [len(v["contracts"]) for v in views] == [2] + [0] * (len(views) - 1)
    assert {c["type"] for c in views[0]["contracts"]} == {"put"}


# -- get_option_greeks ---------------------------------------------------------------------


async def test_greeks_match_py_vollib_and_prices_lie_within_the_quote(
    market: MarketData,
) -> None:
    chain = market.option_chain("MSFT", AS_OF, min_dte=14, max_dte=30)
    picks = [c for c in chain.contracts if c.expiration == chain.expirations[0]][:4]
    out = await call(
        market,
        "get_option_greeks",
        {
            "symbol": "MSFT",
            "contract_symbols": [picks[0].contract_symbol, picks[1].contract_symbol],
            "contracts": [
                {"expiration": str(c.expiration), "strike": c.strike, "type": c.option_type}
                for c in picks[2:]
            ],
        },
    )
    assert out["not_found"] == [] and len(out["contracts"]) == 4
    spot, rate = out["underlying_price"], out["rate"]
    for row, raw in zip(out["contracts"], picks, strict=True):
        assert (row["expiration"], row["strike"], row["type"]) == (
            str(raw.expiration),
            raw.strike,
            raw.option_type,
        )
        flag = "c" if row["type"] == "call" else "p"
        args = (flag, spot, row["strike"], row["years_to_expiry"], rate, row["iv"])
        assert row["delta"] == pytest.approx(analytical.delta(*args), rel=2e-3, abs=1e-4)
        assert row["gamma"] == pytest.approx(analytical.gamma(*args), rel=2e-3)
        assert row["theta"] == pytest.approx(analytical.theta(*args), rel=2e-3, abs=1e-5)
        assert row["vega"] == pytest.approx(analytical.vega(*args), rel=2e-3)
        assert row["rho"] == pytest.approx(analytical.rho(*args), rel=2e-3, abs=1e-5)
        price = black_scholes(*args)
        assert row["bid"] - 0.005 <= price <= row["ask"] + 0.005
        assert row["greeks_source"] == "provider"


async def test_unlisted_contracts_get_the_nearest_strikes(market: MarketData) -> None:
    chain = market.option_chain("MSFT", AS_OF, min_dte=14, max_dte=30)
    exp = chain.expirations[0]
    listed = chain.select("put", exp)[0]
    replies, _ = await run_tool(
        market,
        (
            "get_option_greeks",
            {
                "symbol": "MSFT",
                "contracts": [
                    {"expiration": str(exp), "strike": listed.strike, "type": "put"},
                    {"expiration": str(exp), "strike": 29.1, "type": "put"},
                ],
            },
        ),
        (
            "get_option_greeks",
            {
                "symbol": "MSFT",
                "contracts": [{"expiration": str(exp), "strike": 29.1, "type": "put"}],
            },
        ),
    )
    partial = json.loads(replies[0])
    assert len(partial["contracts"]) == 1
    assert "29.1 put: strike not listed; nearest:" in partial["not_found"][0]
    assert "none of the contracts is listed" in replies[1]  # a retry, with the hint


# -- calculate_roc -------------------------------------------------------------------------


async def test_roc_by_hand(market: MarketData) -> None:
    out = await call(market, "calculate_roc", {"premium": 1.25, "strike": 95, "dte": 21})
    roc = 1.25 / 95
    assert out["roc"] == pytest.approx(roc * 100, abs=1e-4)
    assert out["weekly_roc"] == pytest.approx(roc * 7 / 21 * 100, abs=1e-4)
    assert out["annualized_roc"] == pytest.approx(roc * 365 / 21 * 100, abs=1e-3)
    assert out["annualized_compound_roc"] == pytest.approx(
        ((1 + roc) ** (365 / 21) - 1) * 100, abs=1e-3
    )
    assert out["breakeven"] == 93.75
    assert out["capital_per_contract"] == 9500 and out["premium_per_contract"] == 125
    assert "probability_of_profit" not in out and "pass iv" in out["missing"][0]


async def test_probability_of_profit_is_n_d2_at_breakeven(market: MarketData) -> None:
    given = await call(
        market,
        "calculate_roc",
        {"premium": 0.62, "strike": 30, "dte": 21, "iv": 0.30, "underlying_price": 31.0},
    )
    read = await call(
        market,
        "calculate_roc",
        {"premium": 0.62, "strike": 30, "dte": 21, "iv": 0.30, "symbol": "MSFT"},
    )
    for out, spot in ((given, 31.0), (read, last_close("MSFT", AS_OF))):
        inputs = out["pop_inputs"]
        assert inputs["underlying_price"] == pytest.approx(spot)
        t, r, sigma, be = 21 / 365, inputs["rate"], 0.30, 30 - 0.62
        d2 = (math.log(spot / be) + (r - sigma**2 / 2) * t) / (sigma * math.sqrt(t))
        assert out["probability_of_profit"] == pytest.approx(norm.cdf(d2), abs=1e-4)


# -- filter_options ------------------------------------------------------------------------


async def test_filter_returns_only_contracts_inside_the_criteria(market: MarketData) -> None:
    criteria = {
        "symbol": "AMZN",
        "option_type": "put",
        "dte_min": 14,
        "dte_max": 45,
        "delta_min": 0.15,
        "delta_max": 0.30,
        "min_weekly_roc": 0.2,
        "min_open_interest": 100,
        "max_spread_pct": 10.0,
        "limit": 5,
    }
    replies, _ = await run_tool(market, ("filter_options", criteria), as_of=AMZN_AS_OF)
    out = json.loads(replies[0])
    rows = out["contracts"]
    assert 0 < len(rows) <= 5 and out["matched"] >= len(rows)
    for c in rows:
        assert c["type"] == "put" and 14 <= c["dte"] <= 45
        assert -0.30 <= c["delta"] <= -0.15
        assert c["weekly_roc"] >= 0.2 and c["open_interest"] >= 100
        assert c["spread_pct"] <= 10.0
        assert c["weekly_roc"] == pytest.approx(
            c["mid"] / c["strike"] * 7 / c["dte"] * 100, abs=2e-3
        )
    assert [c["weekly_roc"] for c in rows] == sorted((c["weekly_roc"] for c in rows), reverse=True)
    # Independently, from the raw chain: the same number of contracts qualifies.
    chain = market.option_chain("AMZN", AMZN_AS_OF, min_dte=14, max_dte=45)
    expected = [
        c
        for c in chain.contracts
        if c.option_type == "put"
        and c.delta is not None
        and 0.15 <= -c.delta <= 0.30
        and (c.open_interest or 0) >= 100
        and c.mid
        and (c.ask - c.bid) / c.mid * 100 <= 10.0 + 0.005
        and c.mid / c.strike * 7 / c.dte * 100 >= 0.2 - 0.0005
    ]
    assert out["matched"] == len(expected)
    assert out["scanned"] == len([c for c in chain.contracts if c.option_type == "put"])
    assert sum(out["rejected_by"].values()) == out["scanned"] - out["matched"]


async def test_filter_explains_an_empty_result(market: MarketData) -> None:
    out = await call(market, "filter_options", {"symbol": "MSFT", "min_weekly_roc": 50})
    assert out["matched"] == 0 and out["contracts"] == []
    assert out["rejected_by"] and "rejected the most" in out["notes"][0]


# -- calculate_iv_hv -----------------------------------------------------------------------


async def test_iv_hv_against_independent_computations(market: MarketData) -> None:
    replies, _ = await run_tool(market, ("calculate_iv_hv", {"symbol": "MSFT"}))
    assert len(replies[0]) < 2_500
    out = json.loads(replies[0])
    bars = BundledProvider().daily_bars("MSFT", AS_OF).frame
    logret = np.diff(np.log(bars["adj_close"].to_numpy()[-21:]))
    assert out["hv"] == pytest.approx(logret.std(ddof=1) * math.sqrt(252), abs=1e-4)
    hl = np.log(bars["high"] / bars["low"]).to_numpy()[-20:]
    assert out["hv_parkinson"] == pytest.approx(
        math.sqrt((hl**2).sum() / (4 * 20 * math.log(2)) * 252), abs=1e-4
    )
    # ATM IV by hand: the expiration nearest 30 days, strikes bracketing the price.
    chain = market.option_chain("MSFT", AS_OF, min_dte=16, max_dte=51)
    exp = min(chain.expirations, key=lambda d: (abs((d - AS_OF.date()).days - 30), d))
    spot = chain.underlying_price
    ivs: dict[float, list[float]] = {}
    for c in chain.select(expiration=exp):
        ivs.setdefault(c.strike, []).append(c.iv or 0.0)
    lo = max(k for k in ivs if k <= spot)
    hi = min(k for k in ivs if k >= spot)
    iv_lo, iv_hi = np.mean(ivs[lo]), np.mean(ivs[hi])
    iv = iv_lo if lo == hi else iv_lo + (spot - lo) / (hi - lo) * (iv_hi - iv_lo)
    assert out["iv_expiration"] == str(exp)
    assert out["iv"] == pytest.approx(iv, abs=1e-4)
    assert out["iv_hv_ratio"] == pytest.approx(iv / out["hv"], abs=2e-3)
    ratio = out["iv_hv_ratio"]
    assert out["assessment"] == ("rich" if ratio > 1.2 else "cheap" if ratio < 0.9 else "fair")
    assert out["source"]["origin"] == "modeled" and "modeled" in " ".join(out["notes"])
    hv_source = out["hv_source"]
    assert (hv_source["provider"], hv_source["origin"]) == ("bundled", "observed")
    assert hv_source["basis"].startswith("as traded on 2012-06-29; earlier bars adjusted")
    assert 0 <= out["iv_rank"] <= 100 and 0 <= out["iv_percentile"] <= 100
    assert out["iv_history_points"] >= 20


async def test_iv_hv_without_option_data_still_reports_hv(market: MarketData) -> None:
    out = await call(BundledProvider(), "calculate_iv_hv", {"symbol": "MSFT"})
    assert out["hv"] > 0 and "iv" not in out and "iv_rank" not in out
    assert any("option chain" in m for m in out["missing"])


async def test_hv_is_not_fooled_by_a_split(market: MarketData) -> None:
    # AAPL split 2:1 on 2005-02-28; the bundled close is unadjusted there.
    out = await call(
        market, "calculate_iv_hv", {"symbol": "AAPL"}, as_of=datetime(2005, 3, 15, 21, tzinfo=UTC)
    )
    assert 0.1 < out["hv"] < 0.8 and 0.1 < out["hv_yang_zhang"] < 0.8


async def test_each_run_sees_its_own_instant(market: MarketData) -> None:
    later = AS_OF + timedelta(days=30)
    first = await call(market, "filter_options", {"symbol": "MSFT", "delta_min": 0.05})
    second = await call(
        market, "filter_options", {"symbol": "MSFT", "delta_min": 0.05}, as_of=later
    )
    assert first["underlying_price"] == pytest.approx(last_close("MSFT", AS_OF))
    assert second["underlying_price"] == pytest.approx(last_close("MSFT", later))
    assert first["underlying_price"] != second["underlying_price"]
    assert all(date.fromisoformat(c["expiration"]) > later.date() for c in second["contracts"])


class QuotesOnly(Provider):
    """An observed chain that quotes bid and ask only (no IV, no Greeks), like some feeds."""

    name = "quotes"
    kinds = frozenset({DataKind.OPTION_CHAIN})

    def __init__(self, chain: OptionChain) -> None:
        super().__init__(clock=lambda: AS_OF)
        self._chain = chain

    def _option_chain(
        self, symbol: str, as_of: datetime, min_dte: int, max_dte: int
    ) -> OptionChain:
        bare = [
            c.model_copy(update=dict.fromkeys(("iv", "delta", "gamma", "theta", "vega", "rho")))
            for c in self._chain.contracts
        ]
        provenance = self._chain.provenance.model_copy(
            update={"provider": "quotes", "origin": "observed"}
        )
        return self._chain.model_copy(update={"contracts": bare, "provenance": provenance})


async def test_missing_iv_and_greeks_are_computed_from_the_quote(market: MarketData) -> None:
    chain = market.option_chain("AMZN", AMZN_AS_OF, min_dte=14, max_dte=30)
    near = sorted(
        chain.select("put", chain.expirations[0]),
        key=lambda c: abs(c.strike - chain.underlying_price),
    )[:3]
    out = await call(
        QuotesOnly(chain),
        "get_option_greeks",
        {"symbol": "AMZN", "contract_symbols": [c.contract_symbol for c in near]},
        as_of=AMZN_AS_OF,
    )
    assert out["source"] == {"provider": "quotes", "origin": "observed", "basis": ""}
    for row, raw in zip(out["contracts"], near, strict=True):
        assert row["greeks_source"] == "computed"
        args = (
            "p",
            out["underlying_price"],
            row["strike"],
            row["years_to_expiry"],
            out["rate"],
            row["iv"],
        )
        # The IV reprices the mid (py_vollib), and sits near the model's own IV.
        assert black_scholes(*args) == pytest.approx(row["mid"], abs=0.01)
        assert row["iv"] == pytest.approx(raw.iv, abs=0.01)
        assert row["delta"] == pytest.approx(analytical.delta(*args), rel=2e-3)
        assert row["vega"] == pytest.approx(analytical.vega(*args), rel=2e-3)


# -- IV history: one pass over the bars equals a walk through the chains -------------------


class CountingBars(Provider):
    """Bundled bars that count how often they are asked for."""

    name = "counting"
    kinds = frozenset({DataKind.DAILY_BARS})

    def __init__(self) -> None:
        super().__init__()
        self.inner, self.calls = BundledProvider(), 0

    def _daily_bars(self, symbol: str, as_of: datetime) -> Any:
        self.calls += 1
        return self.inner.daily_bars(symbol, as_of)


@pytest.mark.parametrize(
    ("symbol", "day", "window", "target"),
    [
        ("NVDA", "2024-11-29", (16, 51), 30),  # weeklies, a 10:1 split in June 2024
        ("AAPL", "2005-03-15", (16, 51), 30),  # no weeklies yet, a 2:1 split two weeks before
        ("AMZN", "2008-11-28", (1, 28), 7),  # a crash: short vol far above long
        ("IBM", "2012-06-29", (16, 51), 30),
        ("NFLX", "2018-09-14", (16, 51), 30),  # bundled from 2018: the history stops early
        ("JNJ", "1990-12-31", (46, 81), 60),  # the first year of its data: stops early
    ],
)
@pytest.mark.slow
def test_iv_history_in_one_pass_equals_the_chain_by_chain_reference(
    market: MarketData, symbol: str, day: str, window: tuple[int, int], target: int
) -> None:
    from alphadesk.data.calendar import session_close
    from alphadesk.data.chain import ProviderChain
    from alphadesk.data.options_model import ModeledOptions
    from alphadesk.tools.options.chain import iv_history_by_chains

    as_of = session_close(date.fromisoformat(day))
    instants = [as_of - timedelta(weeks=w) for w in range(1, 53)]
    assert isinstance(market, ProviderChain)
    (modeled,) = [p for p in market.providers if isinstance(p, ModeledOptions)]
    reference = iv_history_by_chains(market, symbol, instants, window, target, "modeled")
    fast = modeled.atm_iv_history(
        symbol, instants, min_dte=window[0], max_dte=window[1], target_dte=target
    )
    assert len(reference) > 0
    assert fast == pytest.approx(reference, rel=1e-12, abs=1e-14)


def test_iv_history_is_cached_per_question() -> None:
    from alphadesk.data.options_model import ModeledOptions

    bars = CountingBars()
    modeled = ModeledOptions(bars)
    instants = [AS_OF - timedelta(weeks=w) for w in range(1, 53)]
    first = modeled.atm_iv_history("MSFT", instants, min_dte=16, max_dte=51, target_dte=30)
    asked = bars.calls
    again = modeled.atm_iv_history("msft", instants, min_dte=16, max_dte=51, target_dte=30)
    assert again == first and len(first) == 52 and bars.calls == asked
    modeled.atm_iv_history("MSFT", instants, min_dte=16, max_dte=51, target_dte=45)
    assert bars.calls > asked  # another question is computed, not answered from the cache


@pytest.mark.slow
async def test_iv_rank_reads_the_same_history_as_the_chains(market: MarketData) -> None:
    from alphadesk.analytics.volatility import iv_rank
    from alphadesk.tools.options.chain import iv_history_by_chains

    out = await call(market, "calculate_iv_hv", {"symbol": "MSFT"})
    instants = [AS_OF - timedelta(weeks=w) for w in range(1, 53)]
    history = iv_history_by_chains(market, "MSFT", instants, (16, 51), 30, "modeled")
    expected = iv_rank([*history, out["iv"]], out["iv"])
    assert out["iv_history_points"] == expected.observations == 53
    assert out["iv_rank"] == pytest.approx(expected.rank, abs=0.1)

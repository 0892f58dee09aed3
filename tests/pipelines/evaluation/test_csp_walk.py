"""The CSP desk walked forward: each select is a short put held to expiry, settled by hand."""

from __future__ import annotations

import asyncio
from datetime import date, timedelta
from pathlib import Path

import pytest

from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.calendar import session_close, sessions_between
from alphadesk.pipelines.evaluation import EvalSpec, evaluate


def _close_on_or_before(market: object, day: date, symbol: str = "AAPL") -> float:
    last = sessions_between(day - timedelta(days=7), day)[-1]
    bars = market.daily_bars(symbol, session_close(last))  # type: ignore[attr-defined]
    return float(bars.frame["close"].iloc[-1])


@pytest.mark.slow
def test_selected_puts_pay_premium_less_the_shortfall_at_expiry(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    spec = EvalSpec(
        desk="csp", symbols=["AAPL"], start=date(2011, 2, 1), end=date(2011, 3, 31), every=20
    )
    done = asyncio.run(evaluate(settings, spec))
    puts = [r.put for r in done.decisions if r.put is not None]
    assert [r.decision for r in done.decisions] == ["select", "select", "select"]
    assert len(puts) == 3 and puts[-1].expiration > spec.end  # the last one is still open
    market = build_provider(settings)
    expected = spec.cash
    for put in puts[:2]:  # held to expiry: premium minus what the close fell below the strike
        shortfall = max(0.0, put.strike - _close_on_or_before(market, put.expiration))
        expected += 100 * (put.premium - shortfall) - spec.contract_fee
    open_put = puts[2]  # marked at its intrinsic value at the last close
    last = _close_on_or_before(market, spec.end)
    expected += 100 * (open_put.premium - max(0.0, open_put.strike - last)) - spec.contract_fee
    rows = {(r["strategy"], r["symbol"]): r for r in done.rows}
    desk = rows[("csp_desk", "AAPL")]
    assert desk["final_value"] == pytest.approx(expected, abs=0.01)
    assert desk["puts"] == 3 and desk["trades"] == 2 and desk["costs"] == pytest.approx(1.95)
    assert rows[("mechanical_put", "AAPL")]["puts"] >= 1
    assert ("buy_hold", "pooled") in rows and ("csp_desk", "pooled") in rows


def test_a_put_sold_before_a_split_settles_as_the_exchange_adjusts_it(tmp_path: Path) -> None:
    # NVDA split 4-for-1 effective 2021-07-20: a put struck near $800 in June settles in
    # August on a close near $200, as 400 shares at a quarter of the strike.
    settings = Settings(data_dir=tmp_path)
    spec = EvalSpec(
        desk="csp", symbols=["NVDA"], start=date(2021, 7, 6), end=date(2021, 8, 31), every=15
    )
    done = asyncio.run(evaluate(settings, spec))
    puts = [r.put for r in done.decisions if r.put is not None]
    split = date(2021, 7, 20)
    assert any(r.as_of.date() < split <= p.expiration for r, p in _sold(done)), "no put spans it"
    assert puts[0].strike > 500  # struck as traded, before the split
    market = build_provider(settings)
    expected = spec.cash
    for decided, put in _sold(done):
        settle = min(put.expiration, spec.end)
        ratio = 4.0 if decided.as_of.date() < split <= settle else 1.0
        close = _close_on_or_before(market, settle, "NVDA") * ratio  # on the sale's basis
        expected += 100 * (put.premium - max(0.0, put.strike - close)) - spec.contract_fee
    rows = {(r["strategy"], r["symbol"]): r for r in done.rows}
    assert rows[("csp_desk", "NVDA")]["final_value"] == pytest.approx(expected, abs=0.01)


def _sold(done: object) -> list[tuple[object, object]]:
    return [(r, r.put) for r in done.decisions if r.put is not None]  # type: ignore[attr-defined]

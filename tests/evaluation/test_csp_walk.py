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


def _close_on_or_before(market: object, day: date) -> float:
    last = sessions_between(day - timedelta(days=7), day)[-1]
    bars = market.daily_bars("AAPL", session_close(last))  # type: ignore[attr-defined]
    return float(bars.frame["close"].iloc[-1])


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

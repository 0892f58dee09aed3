"""Decisions to positions to P&L, and the short put's P&L, against hand computations."""

from __future__ import annotations

from datetime import UTC, date, datetime

import numpy as np
import pandas as pd
import pytest

from alphadesk.pipelines.evaluation import (
    DecisionRecord,
    EvalSpec,
    ShortPut,
    config_of,
    positions_from_decisions,
    put_book,
    short_put_pnl,
)
from alphadesk.pipelines.evaluation.scoring import score_desk


def test_buy_sell_hold_and_failures_become_positions() -> None:
    calls = ["HOLD", "BUY", "HOLD", "failed", "SELL", "HOLD", "BUY"]
    assert positions_from_decisions(calls) == [0, 1, 1, 1, 0, 0, 1]
    assert positions_from_decisions(calls, long_short=True) == [0, 1, 1, 1, -1, -1, 1]
    with pytest.raises(ValueError, match="unknown decision"):
        positions_from_decisions(["BUY", "STRONG BUY"])


def _closes(day: int) -> datetime:
    return datetime(2021, 3, day, 21, 0, tzinfo=UTC)  # 16:00 New York


def test_a_decision_series_trades_at_the_next_open_with_costs() -> None:
    days = [1, 2, 3, 4, 5, 8]
    index = pd.DatetimeIndex([_closes(d) for d in days]).tz_convert("America/New_York")
    frame = pd.DataFrame(
        {
            "open": [10.0, 11.0, 12.0, 13.0, 14.0, 15.0],
            "high": [10.5, 11.5, 12.5, 13.5, 14.5, 15.5],
            "low": [9.5, 10.5, 11.5, 12.5, 13.5, 14.5],
            "close": [10.0, 11.0, 12.0, 13.0, 14.0, 15.0],
            "volume": [1e6] * 6,
        },
        index=index,
    )
    spec = EvalSpec(
        symbols=["X"],
        start=date(2021, 3, 1),
        end=date(2021, 3, 8),
        cash=1000.0,
        commission=0.001,
        slippage=0.0,
        fraction=0.5,
    )
    decided = {1: "BUY", 3: "HOLD", 4: "SELL"}
    held = positions_from_decisions(list(decided.values()))
    records = [
        DecisionRecord(symbol="X", as_of=_closes(d), decision=c, position=p)
        for (d, c), p in zip(decided.items(), held, strict=True)
    ]
    scored = score_desk(spec, config_of(spec), {"X": frame}, records, [_closes(1)], ())
    desk = scored[0]
    # By hand: BUY at the 1st's close sizes floor(0.5 * 1000 / 10) = 50 shares, filled at
    # the 2nd's open (11) paying 0.1 % commission; SELL at the 4th's close fills at the
    # 5th's open (14).
    bought, sold = 50 * 11.0, 50 * 14.0
    final = 1000.0 - bought - bought * 0.001 + sold - sold * 0.001
    assert desk.strategy == "desk" and desk.symbol == "X"
    assert desk.metrics.final == pytest.approx(final, abs=1e-9)
    assert desk.metrics.trades == 1 and desk.metrics.win_rate == 1.0
    assert desk.metrics.commission == pytest.approx(0.55 + 0.70)
    assert desk.counts == {"decisions": 3, "buy": 1, "hold": 1, "sell": 1, "failed": 0}
    # Marked at each close in between: the 3rd holds 50 shares at 12.
    assert desk.equity.iloc[2] == pytest.approx(1000.0 - bought - 0.55 + 50 * 12.0)
    pooled = scored[-1]  # one symbol: the pool is that symbol
    assert pooled.symbol == "pooled" and pooled.metrics.final == pytest.approx(final)


def test_a_short_put_pays_its_premium_less_the_shortfall_at_expiry() -> None:
    put = ShortPut("X", _closes(1), date(2021, 3, 5), strike=100.0, premium=2.5, contracts=2)
    # Out of the money: the premium, less the fee per contract.
    assert short_put_pnl(put, 101.0, 0.65) == pytest.approx(2 * (250.0 - 0.65))
    # In the money by 5: 2 contracts x 100 x (2.5 - 5) - 2 x 0.65.
    assert short_put_pnl(put, 95.0, 0.65) == pytest.approx(-500.0 - 1.3)


def test_the_put_book_marks_open_puts_at_intrinsic_and_settles_at_expiry() -> None:
    days = [1, 2, 3, 4, 5, 8]
    index = pd.DatetimeIndex([_closes(d) for d in days]).tz_convert("America/New_York")
    closes = pd.Series([102.0, 98.0, 101.0, 96.0, 97.0, 90.0], index=index)
    put = ShortPut("X", _closes(1), date(2021, 3, 5), strike=100.0, premium=2.0)
    too_big = ShortPut("X", _closes(2), date(2021, 3, 5), strike=100.0, premium=2.0)
    book = put_book([put, too_big], closes, capital=15_000.0, fee_per_contract=1.0)
    credit = 200.0 - 1.0
    expected = [
        15_000 + credit,  # sold at the 1st's close, out of the money
        15_000 + credit - 200,  # 98: 2 below the strike
        15_000 + credit,
        15_000 + credit - 400,
        15_000 + credit - 300,  # expiry on the 5th: settled at 97
        15_000 + credit - 300,  # after expiry the loss stays what it was (90 is not ours)
    ]
    np.testing.assert_allclose(book.equity.to_numpy(), expected)
    assert book.pnls == [pytest.approx(short_put_pnl(put, 97.0, 1.0))] == [pytest.approx(-101.0)]
    assert book.assigned == 1 and book.fees == 1.0
    assert book.skipped == [too_big]  # 15,000 secures one 100-strike put, not two
    assert book.exposure.tolist() == [True, True, True, True, True, False]


def test_a_put_after_a_split_keeps_its_collateral_and_its_dollars() -> None:
    put = ShortPut("X", _closes(1), date(2021, 3, 5), strike=300.0, premium=6.0, contracts=2)
    after = put.on_basis(3.0)  # a 3-for-1 split: strike 100, 300 shares per contract
    assert (after.strike, after.deliverable) == (100.0, 300.0)
    assert after.collateral == pytest.approx(put.collateral)
    # Settled at 90 after the split is settled at 270 before it: 2 x 100 x (6 - 30) - fees.
    assert short_put_pnl(after, 90.0, 0.65) == pytest.approx(short_put_pnl(put, 270.0, 0.65))
    assert short_put_pnl(after, 90.0, 0.65) == pytest.approx(200 * (6.0 - 30.0) - 1.3)
    assert put.on_basis(1.0) is put

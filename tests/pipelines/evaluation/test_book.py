"""The one-book walk and its scores, against hand-computed books and an independent
pandas reference of StockBench's formulas."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from alphadesk.analytics.performance import daily_sortino
from alphadesk.pipelines.evaluation.book import Session, run_book, score_book

DAYS = pd.DatetimeIndex(pd.bdate_range("2025-03-03", periods=4))


def _frames(opens: dict[str, list[float]], paid: dict[str, list[float]] | None = None):
    o = pd.DataFrame(opens, index=DAYS)
    d = pd.DataFrame(paid or {s: [0.0] * len(DAYS) for s in opens}, index=DAYS)
    return o, o.copy(), d


def test_a_held_position_gains_the_price_and_pays_one_commission() -> None:
    opens, closes, paid = _frames({"A": [10.0, 11.0, 9.0, 12.0]})
    book = run_book(
        opens, closes, paid, lambda s: {"A": 1.0} if s.weights.sum() == 0 else None,
        first=0, cash=1000.0, commission=0.001,
    )  # fmt: skip
    shares = 1000.0 / 10.0 / 1.001  # all of the cash, less the commission on the buy
    expected = [shares * 10, shares * 11, shares * 9, shares * 12]  # marked at the opens
    assert book.nav.to_numpy() == pytest.approx(expected)
    assert book.costs == pytest.approx(shares * 10.0 * 0.001)
    assert book.traded == pytest.approx(shares * 10.0)
    score = score_book(book)
    assert score.final_return == pytest.approx(shares * 12 / 1000.0 - 1)
    assert score.max_drawdown == pytest.approx(9 / 11 - 1)  # peak 11, trough 9


def test_a_dividend_is_credited_on_its_ex_date_to_the_shares_held_before() -> None:
    opens, closes, paid = _frames({"A": [10.0] * 4}, {"A": [0.0, 0.5, 0.0, 0.0]})
    book = run_book(
        opens, closes, paid, lambda s: {"A": 1.0} if s.i == 0 else None,
        first=0, cash=1000.0, commission=0.0,
    )  # fmt: skip
    assert book.dividends == pytest.approx(100 * 0.5)
    assert book.nav.to_numpy() == pytest.approx([1000.0, 1050.0, 1050.0, 1050.0])


def test_a_policy_sees_the_open_and_only_earlier_closes() -> None:
    opens, closes, paid = _frames({"A": [10.0, 11.0, 12.0, 13.0]})
    closes.loc[:, "A"] = [10.5, 11.5, 12.5, 13.5]
    seen: list[Session] = []
    run_book(opens, closes, paid, lambda s: seen.append(s), first=1, cash=1.0, commission=0.0)
    assert [len(s.closes) for s in seen] == [1, 2, 3]
    assert seen[0].closes.index[-1] < DAYS[1] and float(seen[0].opens["A"]) == 11.0


def test_rebalancing_to_cash_sells_at_the_open_with_the_commission() -> None:
    opens, closes, paid = _frames({"A": [10.0, 20.0, 20.0, 20.0], "B": [5.0] * 4})
    targets = [{"A": 0.5, "B": 0.5}, {}, None, None]
    book = run_book(
        opens, closes, paid, lambda s: targets[s.i], first=0, cash=100.0, commission=0.01
    )
    a, b = 50.0 / 10 / 1.01, 50.0 / 5 / 1.01
    after = a * 20 + b * 5  # value at the second open, then sold less 1 %
    assert book.nav.iloc[1] == pytest.approx(after * 0.99)
    assert book.nav.iloc[-1] == pytest.approx(after * 0.99)


@pytest.mark.parametrize(
    "target", [{"A": 0.7, "B": 0.7}, {"A": -0.1}, {"C": 0.5}], ids=["sum", "short", "unknown"]
)
def test_impossible_weights_are_refused_by_name(target: dict[str, float]) -> None:
    opens, closes, paid = _frames({"A": [1.0] * 4, "B": [1.0] * 4})
    with pytest.raises(ValueError, match="weights"):
        run_book(opens, closes, paid, lambda s: target, first=0, cash=1.0, commission=0.0)


def test_daily_sortino_is_stockbench_s_formula() -> None:
    r = np.array([0.0, 0.01, -0.02, 0.03, -0.01, 0.005])
    # by hand: mean 0.0025 / sample std of (-0.02, -0.01) = 0.0070710678
    assert daily_sortino(r) == pytest.approx(0.0025 / (0.01 / math.sqrt(2)))
    rng = np.random.default_rng(3)
    returns = pd.Series(rng.normal(0.0005, 0.01, 120))
    reference = returns.mean() / returns[returns < 0].std()  # their metrics.py, by pandas
    assert daily_sortino(returns) == pytest.approx(reference, rel=1e-12)
    assert daily_sortino([0.01, 0.02, -0.01]) is None  # one loss: no spread to divide by

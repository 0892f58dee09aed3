"""The decision mix beside the trend rule: the rule's actions from TA-Lib's average, the
chi-square test against the statistic computed by hand, and the dominance flag."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import talib
from scipy.stats import chi2

from alphadesk.analytics.decision_mix import compare_mix, dominant_action, trend_actions
from alphadesk.analytics.errors import InsufficientData, InvalidInput


def test_the_trend_rule_reads_the_200_session_average_as_talib_computes_it(
    real_close_only: dict[str, pd.DataFrame],
) -> None:
    closes = real_close_only["KO"]["close"].loc["2004":"2012"]
    at = list(closes.index[250::5])
    got = trend_actions(closes, at)
    average = pd.Series(talib.SMA(closes.to_numpy(), 200), index=closes.index)
    ratio = closes.loc[at] / average.loc[at] - 1
    expected = np.where(ratio > 0.01, "BUY", np.where(ratio < -0.01, "SELL", "HOLD"))
    assert got == list(expected)
    assert set(got) == {"BUY", "HOLD", "SELL"}  # ten years of KO take all three
    with pytest.raises(InsufficientData, match="200"):
        trend_actions(closes, [closes.index[100]])
    # No instant (a symbol whose every decision failed): no action (the closes are tz-aware).
    assert closes.index.tz is not None and trend_actions(closes, []) == []


def test_the_mix_test_is_pearsons_chi_square_of_the_two_by_three_table() -> None:
    desk = ["HOLD"] * 86 + ["BUY"] * 9 + ["SELL"] * 5
    rule = ["BUY"] * 55 + ["HOLD"] * 10 + ["SELL"] * 35
    got = compare_mix(desk, rule)
    table = np.array([[9, 86, 5], [55, 10, 35]], dtype=float)
    expected = table.sum(1, keepdims=True) * table.sum(0) / table.sum()
    statistic = float(((table - expected) ** 2 / expected).sum())
    assert got.statistic == pytest.approx(statistic)
    assert got.p_value == pytest.approx(chi2.sf(statistic, 2))
    assert got.dominant == "HOLD" and got.rule_dominant is None
    assert got.shares()["HOLD"] == pytest.approx(0.86)
    # The same mix is no evidence of a difference.
    assert compare_mix(rule, list(reversed(rule))).p_value == pytest.approx(1.0)


def test_dominance_needs_more_than_80_percent_and_bad_actions_are_refused() -> None:
    assert dominant_action({"BUY": 80, "HOLD": 20, "SELL": 0}) is None
    assert dominant_action({"BUY": 81, "HOLD": 19, "SELL": 0}) == "BUY"
    assert compare_mix(["BUY"] * 3, ["BUY"] * 3).p_value is None  # nothing to test
    with pytest.raises(InvalidInput, match="unknown actions"):
        compare_mix(["BUY", "failed"], ["BUY", "SELL"])

"""A desk's decision mix (BUY/HOLD/SELL shares) beside a trend rule's on the same dates.

A desk that says HOLD 86 % of the time is telling you little (TradingAgents #1321). The
yardstick is a plain trend-following rule asked on the same dates: **BUY when the close is
more than 1 % above its 200-session simple average, SELL when more than 1 % below, HOLD
within that band** (:func:`trend_actions`). A chi-square test of homogeneity on the 2 × 3
table of counts (:func:`compare_mix`) says whether the two mixes differ by more than
chance; one action over 80 % of a mix is flagged as dominating.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import InsufficientData, InvalidInput

__all__ = [
    "ACTIONS",
    "DOMINANT",
    "TREND_BAND",
    "TREND_WINDOW",
    "MixComparison",
    "compare_mix",
    "dominant_action",
    "trend_actions",
]

ACTIONS = ("BUY", "HOLD", "SELL")
TREND_WINDOW = 200  # sessions in the trend rule's average
TREND_BAND = 0.01  # within ±1 % of the average the rule holds
DOMINANT = 0.80  # one action's share above which a mix is flagged


def trend_actions(
    closes: pd.Series,
    at: Sequence[pd.Timestamp],
    window: int = TREND_WINDOW,
    band: float = TREND_BAND,
) -> list[str]:
    """The trend rule's action at each instant of ``at``, from the closes up to it.

    Args:
        closes: Daily closes, increasing index (tz-aware like ``at``).
        at: Decision instants; each reads the last close at or before it.
        window: Sessions in the simple moving average.
        band: Relative distance from the average within which the rule holds.

    Raises:
        InsufficientData: Fewer than ``window`` closes at or before an instant.
    """
    if not at:  # e.g. a symbol whose every decision failed
        return []
    average = closes.rolling(window, min_periods=window).mean()
    positions = closes.index.searchsorted(pd.DatetimeIndex(at), side="right") - 1
    actions = []
    for instant, i in zip(at, positions, strict=True):
        if i < 0 or np.isnan(average.iloc[i]):
            raise InsufficientData(
                f"the trend rule at {instant}", window, max(0, int(i) + 1), unit="closes"
            )
        ratio = closes.iloc[i] / average.iloc[i] - 1.0
        actions.append("BUY" if ratio > band else "SELL" if ratio < -band else "HOLD")
    return actions


def dominant_action(counts: Mapping[str, int], share: float = DOMINANT) -> str | None:
    """The action making up more than ``share`` of ``counts``, if one does."""
    total = sum(counts.values())
    if total == 0:
        return None
    action, most = max(counts.items(), key=lambda kv: kv[1])
    return action if most / total > share else None


@dataclass(frozen=True)
class MixComparison:
    """Two mixes of actions over the same dates and the test of their difference.

    ``p_value`` is ``None`` when there is nothing to test (both mixes one and the same
    single action).
    """

    counts: dict[str, int]
    rule_counts: dict[str, int]
    statistic: float | None
    p_value: float | None
    dominant: str | None
    rule_dominant: str | None

    def shares(self, rule: bool = False) -> dict[str, float]:
        counts = self.rule_counts if rule else self.counts
        total = sum(counts.values()) or 1
        return {a: counts[a] / total for a in ACTIONS}


def compare_mix(actions: Sequence[str], rule: Sequence[str]) -> MixComparison:
    """The mix of ``actions`` beside the rule's and a chi-square test of homogeneity
    (Pearson, no continuity correction) over the actions either one took.

    Raises:
        InvalidInput: An action outside BUY/HOLD/SELL, or mixes of different dates.
    """
    if len(actions) != len(rule):
        raise InvalidInput(f"{len(actions)} decisions beside {len(rule)} of the rule's")
    unknown = (set(actions) | set(rule)) - set(ACTIONS)
    if unknown:
        raise InvalidInput(f"unknown actions {sorted(unknown)}; use {', '.join(ACTIONS)}")
    counts = {a: sum(x == a for x in actions) for a in ACTIONS}
    rule_counts = {a: sum(x == a for x in rule) for a in ACTIONS}
    table = np.array([[counts[a], rule_counts[a]] for a in ACTIONS if counts[a] + rule_counts[a]])
    statistic = p_value = None
    if len(table) >= 2 and len(actions) > 0:
        from scipy.stats import chi2_contingency

        result = chi2_contingency(table.T, correction=False)
        statistic, p_value = float(result.statistic), float(result.pvalue)
    return MixComparison(
        counts,
        rule_counts,
        statistic,
        p_value,
        dominant_action(counts),
        dominant_action(rule_counts),
    )

"""What a sceptic asks of the table: how sure each figure is, and whether the desk's
decisions say anything.

* **Intervals.** For every strategy, per symbol and pooled: 95 % stationary-block-bootstrap
  intervals (:mod:`alphadesk.analytics.bootstrap`; mean block 20 sessions, 2,000 draws,
  seed 0) of the annual return, the Sharpe ratio, and each one's difference from buy &
  hold, every strategy resampled on the same days.
* **Decision mix.** The trading desk's BUY/HOLD/SELL shares, per symbol and pooled, beside
  a trend rule's on the same dates (:mod:`alphadesk.analytics.decision_mix`: BUY more than
  1 % above the 200-session average, SELL more than 1 % below, else HOLD), a chi-square
  test of the difference, and a flag when one action is over 80 % of the desk's mix.
  Failed decisions are left out of both.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pandas as pd

from alphadesk.analytics.bootstrap import BootstrapSettings, Interval, bootstrap_intervals
from alphadesk.analytics.decision_mix import (
    ACTIONS,
    DOMINANT,
    TREND_BAND,
    TREND_WINDOW,
    MixComparison,
    compare_mix,
    trend_actions,
)

from .models import DecisionRecord, EvalSpec
from .scoring import DESK, POOLED, Scored

__all__ = ["BENCHMARK", "INTERVAL_KEYS", "METHOD", "MIX_KEYS", "statistics"]

BENCHMARK = "buy_hold"
_SETTINGS = BootstrapSettings()
METHOD = {
    "intervals": (
        f"{_SETTINGS.level:.0%} percentile intervals, stationary block bootstrap over days "
        f"(mean block {_SETTINGS.block:.0f} sessions, {_SETTINGS.replications:,} draws, "
        f"seed {_SETTINGS.seed}); differences from {BENCHMARK} on the same resampled days"
    ),
    "trend_rule": (
        f"BUY when the close is more than {TREND_BAND:.0%} above its {TREND_WINDOW}-session "
        f"average, SELL when more than {TREND_BAND:.0%} below, else HOLD; chi-square test "
        f"of the two mixes; a mix over {DOMINANT:.0%} one action is flagged"
    ),
}
INTERVAL_KEYS = tuple(
    f"{stat}{end}"
    for stat in ("ann_return", "sharpe", "excess_ann_return", "excess_sharpe")
    for end in ("", "_low", "_high")
    if (stat, end) not in (("ann_return", ""), ("sharpe", ""))  # in the table already
)
MIX_KEYS = (
    *(f"{a.lower()}_share" for a in ACTIONS),
    *(f"trend_{a.lower()}_share" for a in ACTIONS),
    "mix_p_value",
    "dominant",
)

Stats = dict[tuple[str, str], dict[str, Any]]


def statistics(
    spec: EvalSpec,
    scored: Sequence[Scored],
    records: Sequence[DecisionRecord],
    frames: dict[str, pd.DataFrame],
) -> Stats:
    """Each row's extra figures by (strategy, symbol): every key of ``INTERVAL_KEYS`` and
    ``MIX_KEYS``, ``None`` where they do not apply."""
    empty = dict.fromkeys((*INTERVAL_KEYS, *MIX_KEYS))
    out: Stats = {(s.strategy, s.symbol): dict(empty) for s in scored}
    for symbol in dict.fromkeys(s.symbol for s in scored):
        for strategy, figures in _intervals([s for s in scored if s.symbol == symbol]).items():
            out[(strategy, symbol)].update(figures)
    if spec.desk == "desk":
        for symbol, mix in _mixes(spec, records, frames).items():
            out[(DESK, symbol)].update(_mix_figures(mix))
    return out


def _intervals(group: Sequence[Scored]) -> dict[str, dict[str, Any]]:
    """One symbol's (or the pooled) strategies, resampled together on their common days."""
    curves = pd.concat({s.strategy: s.equity for s in group}, axis=1, join="inner")
    daily = curves.pct_change().iloc[1:]
    if len(daily) < 2:
        return {}
    benchmark = BENCHMARK if BENCHMARK in daily else None
    found = bootstrap_intervals(
        {name: daily[name].to_numpy() for name in daily}, benchmark, _SETTINGS
    )
    return {
        name: {
            **_ends("ann_return", got.annual_return),
            **_ends("sharpe", got.sharpe),
            **_figure("excess_ann_return", got.excess_annual_return),
            **_figure("excess_sharpe", got.excess_sharpe),
        }
        for name, got in found.items()
    }


def _ends(key: str, interval: Interval | None) -> dict[str, Any]:
    low = None if interval is None else interval.low
    high = None if interval is None else interval.high
    return {f"{key}_low": _round(low), f"{key}_high": _round(high)}


def _figure(key: str, interval: Interval | None) -> dict[str, Any]:
    estimate = None if interval is None else interval.estimate
    return {key: _round(estimate), **_ends(key, interval)}


def _mixes(
    spec: EvalSpec, records: Sequence[DecisionRecord], frames: dict[str, pd.DataFrame]
) -> dict[str, MixComparison]:
    """The desk's mix beside the trend rule's, per symbol and pooled (failed ones out)."""
    desk: dict[str, list[str]] = {}
    rule: dict[str, list[str]] = {}
    for symbol in spec.symbols:
        made = [r for r in records if r.symbol == symbol and r.decision in ACTIONS]
        closes = frames[symbol]["close"]
        desk[symbol] = [r.decision for r in made]
        rule[symbol] = trend_actions(closes, [_stamp(r.as_of, closes) for r in made])
    found = {s: compare_mix(desk[s], rule[s]) for s in spec.symbols}
    found[POOLED] = compare_mix(
        [a for s in spec.symbols for a in desk[s]], [a for s in spec.symbols for a in rule[s]]
    )
    return found


def _stamp(instant: datetime, closes: pd.Series) -> pd.Timestamp:
    return pd.Timestamp(instant).tz_convert(closes.index.tz)


def _mix_figures(mix: MixComparison) -> dict[str, Any]:
    mine, theirs = mix.shares(), mix.shares(rule=True)
    return {
        **{f"{a.lower()}_share": _round(mine[a]) for a in ACTIONS},
        **{f"trend_{a.lower()}_share": _round(theirs[a]) for a in ACTIONS},
        "mix_p_value": _round(mix.p_value),
        "dominant": mix.dominant,
    }


def _round(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else round(float(value), digits) + 0.0

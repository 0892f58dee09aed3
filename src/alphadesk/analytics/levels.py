"""Support and resistance zones, extension from support, and confluence zones.

Tolerances scale with the Average True Range, so a zone is as wide as the stock's normal
daily movement. On a close-only series the ATR degrades to the Wilder average of absolute
close-to-close changes (the true range of a bar whose high, low and close coincide); every
result says which (``source``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import fcluster, linkage

from ._memo import shared
from ._talib import talib
from .errors import InsufficientData, InvalidInput
from .swings import PriceSource, fibonacci_from_bars, price_columns, swing_points

__all__ = [
    "ConfluenceZone",
    "Extension",
    "SupportResistance",
    "Zone",
    "cluster_prices",
    "confluence_zones",
    "extension_from_support",
    "last_atr",
    "support_resistance",
]

ATR_PERIOD = 14
Strength = Literal["strong", "moderate", "weak"]


@shared
def last_atr(bars: pd.DataFrame, period: int = ATR_PERIOD) -> tuple[float, PriceSource]:
    """Latest ATR, or its close-only proxy, with the prices it came from.

    Args:
        bars: Daily bars.
        period: Wilder period.

    Returns:
        ``(atr, source)``.

    Raises:
        InsufficientData: Fewer than ``period + 1`` bars.
    """
    frame, source = price_columns(bars, f"ATR({period})", period + 1)
    values = talib.ATR(
        frame["high"].to_numpy(),
        frame["low"].to_numpy(),
        frame["close"].to_numpy(),
        timeperiod=period,
    )
    return float(values[-1]), source


def cluster_prices(prices: np.ndarray, tolerance: float) -> np.ndarray:
    """Group prices so that no two prices in a group are more than ``tolerance`` apart.

    Complete-linkage hierarchical clustering cut at ``tolerance``.

    Args:
        prices: 1-D prices.
        tolerance: Largest spread within a group (>= 0).

    Returns:
        A group label (from 1) for each price.
    """
    prices = np.asarray(prices, dtype=np.float64).ravel()
    if prices.size <= 1:
        return np.ones(prices.size, dtype=np.int64)
    tree = linkage(prices.reshape(-1, 1), method="complete")
    return np.asarray(fcluster(tree, t=max(tolerance, 0.0), criterion="distance"))


@dataclass(frozen=True, slots=True)
class Zone:
    """A support or resistance zone built from swing points that reversed there.

    Attributes:
        kind: ``support`` (below the last close) or ``resistance`` (at or above it).
        price: Zone centre: mean of the swing prices in it.
        low: Bottom of the zone.
        high: Top of the zone.
        touches: Number of swing highs and lows (reversals) inside the zone.
        first_touch: Date of the earliest of them.
        last_touch: Date of the latest of them.
        bars_since_touch: Bars from the latest touch to the last bar.
        strength: Score in [0, 1]: 65 % from touches (saturating at 4), 35 % from recency
            (exp(−bars_since_touch / 126)).
        label: ``strong`` (>= 0.6), ``moderate`` (>= 0.35) or ``weak``.
        distance_pct: (price − last close) / last close.
    """

    kind: Literal["support", "resistance"]
    price: float
    low: float
    high: float
    touches: int
    first_touch: pd.Timestamp
    last_touch: pd.Timestamp
    bars_since_touch: int
    strength: float
    label: Strength
    distance_pct: float


@dataclass(frozen=True, slots=True)
class SupportResistance:
    """Support and resistance zones around the last close.

    Attributes:
        current_price: Last close.
        atr: ATR (or its close-only proxy) at the last bar.
        tolerance: Zone tolerance in price units (``tolerance_atr · atr``).
        support: Zones below the close, nearest first.
        resistance: Zones at or above the close, nearest first.
        source: ``high_low`` or ``close`` (close-only series).
    """

    current_price: float
    atr: float
    tolerance: float
    support: tuple[Zone, ...]
    resistance: tuple[Zone, ...]
    source: PriceSource


def _label(score: float) -> Strength:
    return "strong" if score >= 0.6 else "moderate" if score >= 0.35 else "weak"


def _zone(
    prices: np.ndarray,
    idx: np.ndarray,
    dates: Mapping[int, pd.Timestamp],
    n: int,
    close: float,
    tol: float,
) -> Zone:
    centre = float(prices.mean())
    last = int(idx.max())
    since = n - 1 - last
    score = 0.65 * min((prices.size - 1) / 3.0, 1.0) + 0.35 * math.exp(-since / 126.0)
    return Zone(
        kind="support" if centre < close else "resistance",
        price=centre,
        low=min(float(prices.min()), centre - tol / 2),
        high=max(float(prices.max()), centre + tol / 2),
        touches=int(prices.size),
        first_touch=dates[int(idx.min())],
        last_touch=dates[last],
        bars_since_touch=since,
        strength=round(score, 4),
        label=_label(score),
        distance_pct=(centre - close) / close,
    )


@shared
def support_resistance(
    bars: pd.DataFrame, num_levels: int = 5, lookback: int = 3, tolerance_atr: float = 0.5
) -> SupportResistance:
    """Support and resistance zones from clustered swing points.

    Swing highs and lows (see :func:`~alphadesk.analytics.swings.swing_points`) are
    grouped so that no two swing prices in a zone lie more than ``tolerance_atr`` ATRs
    apart; each group is a zone scored by touches and recency.

    Args:
        bars: Daily bars (``high``/``low`` if present, else ``close``).
        num_levels: Strongest zones kept on each side (>= 1).
        lookback: Swing-point lookback in bars on each side.
        tolerance_atr: Zone tolerance in ATRs (> 0).

    Returns:
        Zones around the last close; empty when the series has no swings (e.g. flat).

    Raises:
        InsufficientData: Fewer bars than the ATR or the swing lookback needs.
    """
    if not isinstance(num_levels, int) or num_levels < 1:
        raise InvalidInput(f"num_levels must be a positive integer, got {num_levels!r}")
    if not tolerance_atr > 0:
        raise InvalidInput(f"tolerance_atr must be positive, got {tolerance_atr}")
    atr_value, source = last_atr(bars)
    swings = swing_points(bars, lookback)
    points = swings.ordered()
    frame, _ = price_columns(bars, "support/resistance", 1)
    close, tol = float(frame["close"].iloc[-1]), tolerance_atr * atr_value
    zones: list[Zone] = []
    if points:
        prices = np.array([p.price for p in points])
        idx = np.array([p.index for p in points])
        dates = {p.index: p.date for p in points}  # the swings' own dates: no new timestamps
        labels = cluster_prices(prices, tol)
        groups = (labels == g for g in np.unique(labels))
        zones = [_zone(prices[g], idx[g], dates, len(frame), close, tol) for g in groups]

    def side(kind: str) -> tuple[Zone, ...]:
        chosen = sorted((z for z in zones if z.kind == kind), key=lambda z: -z.strength)
        return tuple(sorted(chosen[:num_levels], key=lambda z: abs(z.price - close)))

    return SupportResistance(close, atr_value, tol, side("support"), side("resistance"), source)


@dataclass(frozen=True, slots=True)
class Extension:
    """How far the last close has run above support, in ATRs.

    Attributes:
        close: Last close.
        support: The support price measured from.
        support_source: ``given``, ``zone`` (nearest support zone) or ``recent_low``
            (lowest low of the last 20 bars, when no support zone lies below the close).
        atr: ATR (or close-only proxy).
        atr_multiple: (close − support) / atr; negative when the close is below it.
        sma20: 20-bar simple moving average of the close.
        sma20_atr_multiple: (close − sma20) / atr.
        risk: ``low`` (< ``moderate_at`` ATRs), ``moderate`` (< ``high_at``) or ``high``.
        source: ``high_low`` or ``close``.
    """

    close: float
    support: float
    support_source: Literal["given", "zone", "recent_low"]
    atr: float
    atr_multiple: float
    sma20: float
    sma20_atr_multiple: float
    risk: Literal["low", "moderate", "high"]
    source: PriceSource


def extension_from_support(
    bars: pd.DataFrame,
    support: float | None = None,
    *,
    moderate_at: float = 1.5,
    high_at: float = 3.0,
) -> Extension:
    """Extension of the last close from support in ATR multiples.

    Args:
        bars: Daily bars (at least 20).
        support: Support price; by default the nearest support zone below the close.
        moderate_at: ATR multiple from which the extension risk is ``moderate``.
        high_at: ATR multiple from which it is ``high``.

    Returns:
        The extension and a risk label.

    Raises:
        InsufficientData: Fewer than 20 bars.
        InvalidInput: A flat series (ATR of zero) or bad thresholds.
    """
    if not 0 < moderate_at < high_at:
        raise InvalidInput("thresholds must satisfy 0 < moderate_at < high_at")
    frame, source = price_columns(bars, "extension from support", 20)
    atr_value, _ = last_atr(bars)
    if not atr_value > 0:
        raise InvalidInput("the bars have no range (ATR is 0); extension is undefined")
    close = float(frame["close"].iloc[-1])
    kind: Literal["given", "zone", "recent_low"] = "given"
    if support is None:
        zones = support_resistance(bars).support
        kind = "zone" if zones else "recent_low"
        support = zones[0].price if zones else float(frame["low"].iloc[-20:].min())
    sma20 = float(frame["close"].iloc[-20:].mean())
    multiple = (close - support) / atr_value
    risk: Literal["low", "moderate", "high"] = (
        "low" if multiple < moderate_at else "moderate" if multiple < high_at else "high"
    )
    return Extension(
        close,
        float(support),
        kind,
        atr_value,
        multiple,
        sma20,
        (close - sma20) / atr_value,
        risk,
        source,
    )


@dataclass(frozen=True, slots=True)
class ConfluenceZone:
    """A price area where levels of different families agree.

    Attributes:
        price: Mean of the agreeing levels.
        low: Lowest agreeing level.
        high: Highest agreeing level.
        sources: Names of the agreeing levels, e.g. ``("fib_61.8%", "sma_50", "support")``.
        families: Distinct families among them (``fib``, ``sr``, ``ma``).
        kind: ``support`` below the last close, else ``resistance``.
        distance_pct: (price − last close) / last close.
    """

    price: float
    low: float
    high: float
    sources: tuple[str, ...]
    families: tuple[str, ...]
    kind: Literal["support", "resistance"]
    distance_pct: float


def _candidate_levels(
    bars: pd.DataFrame, close: pd.Series, sma_periods: Sequence[int]
) -> list[tuple[str, str, float]]:
    out: list[tuple[str, str, float]] = []
    try:
        fib = fibonacci_from_bars(bars)
        out += [("fib", f"fib_{lv.label}", lv.price) for lv in fib.retracements]
    except InsufficientData:  # a flat series has no swing to measure
        pass
    sr = support_resistance(bars)
    out += [("sr", z.kind, z.price) for z in (*sr.support, *sr.resistance)]
    out += [
        ("ma", f"sma_{p}", float(close.iloc[-p:].mean())) for p in sma_periods if len(close) >= p
    ]
    return out


def confluence_zones(
    bars: pd.DataFrame,
    tolerance_atr: float = 0.5,
    min_families: int = 2,
    sma_periods: Sequence[int] = (20, 50, 100, 200),
) -> list[ConfluenceZone]:
    """Zones where Fibonacci retracements, S/R zones and moving averages coincide.

    Candidate levels (Fibonacci retracements of the most significant swing, support and
    resistance zone centres, the latest simple moving averages) are clustered so that no
    two levels in a zone are more than ``tolerance_atr`` ATRs apart; a zone is kept when
    its levels come from at least ``min_families`` families.

    Args:
        bars: Daily bars (at least 15).
        tolerance_atr: Zone tolerance in ATRs (> 0).
        min_families: Distinct families required (1 to 3).
        sma_periods: Moving averages to include when the history is long enough.

    Returns:
        Zones ordered by distance from the last close (nearest first).
    """
    if not tolerance_atr > 0 or min_families not in (1, 2, 3):
        raise InvalidInput("tolerance_atr must be positive and min_families in 1..3")
    frame, _ = price_columns(bars, "confluence zones", ATR_PERIOD + 1)
    atr_value, _ = last_atr(bars)
    close = float(frame["close"].iloc[-1])
    levels = _candidate_levels(bars, frame["close"], sma_periods)
    if not levels or not atr_value > 0:
        return []
    prices = np.array([lv[2] for lv in levels])
    labels = cluster_prices(prices, tolerance_atr * atr_value)
    zones = []
    for g in np.unique(labels):
        members = [levels[i] for i in np.flatnonzero(labels == g)]
        families = tuple(sorted({m[0] for m in members}))
        if len(families) < min_families:
            continue
        p = np.array([m[2] for m in members])
        centre = float(p.mean())
        zones.append(
            ConfluenceZone(
                centre,
                float(p.min()),
                float(p.max()),
                tuple(m[1] for m in members),
                families,
                "support" if centre < close else "resistance",
                (centre - close) / close,
            )
        )
    return sorted(zones, key=lambda z: abs(z.distance_pct))

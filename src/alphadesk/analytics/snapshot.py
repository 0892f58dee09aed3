"""The latest value of every common indicator in one result, for a quick technical read."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import indicators as ind
from ._bars import as_close
from .errors import AnalyticsError
from .volatility import hv_close_to_close

__all__ = ["IndicatorSnapshot", "indicator_snapshot"]


@dataclass(frozen=True, slots=True)
class IndicatorSnapshot:
    """Latest indicator values; ``None`` where a value could not be computed.

    Attributes:
        as_of: Date of the last bar.
        close: Last close.
        sma_20: 20-bar simple moving average.
        sma_50: 50-bar simple moving average.
        sma_200: 200-bar simple moving average.
        ema_20: 20-bar exponential moving average.
        rsi_14: RSI(14), Wilder.
        macd: MACD line (12, 26).
        macd_signal: Its 9-bar signal line.
        macd_histogram: MACD − signal.
        bb_upper: Upper Bollinger Band (20, 2).
        bb_lower: Lower Bollinger Band (20, 2).
        bb_percent_b: Position of the close within the bands (0 lower, 1 upper).
        atr_14: ATR(14) in price units.
        adx_14: ADX(14).
        plus_di: +DI(14).
        minus_di: −DI(14).
        stoch_k: Slow stochastic %K (14, 3, 3).
        stoch_d: Slow stochastic %D.
        obv: On-balance volume.
        vwap_20: 20-bar rolling VWAP.
        hv_20: 20-day close-to-close historical volatility, annualised decimal.
        unavailable: Indicator name → why it is ``None`` (too little history, no
            high/low, no volume, undefined on this data).
    """

    as_of: pd.Timestamp
    close: float
    sma_20: float | None = None
    sma_50: float | None = None
    sma_200: float | None = None
    ema_20: float | None = None
    rsi_14: float | None = None
    macd: float | None = None
    macd_signal: float | None = None
    macd_histogram: float | None = None
    bb_upper: float | None = None
    bb_lower: float | None = None
    bb_percent_b: float | None = None
    atr_14: float | None = None
    adx_14: float | None = None
    plus_di: float | None = None
    minus_di: float | None = None
    stoch_k: float | None = None
    stoch_d: float | None = None
    obv: float | None = None
    vwap_20: float | None = None
    hv_20: float | None = None
    unavailable: dict[str, str] = field(default_factory=dict)


def _last(series: pd.Series | np.ndarray) -> float | None:
    value = float(np.asarray(series)[-1])
    return value if math.isfinite(value) else None


_SERIES: dict[str, Callable[[pd.DataFrame], dict[str, pd.Series]]] = {
    "sma_20": lambda b: {"sma_20": ind.sma(b, 20)},
    "sma_50": lambda b: {"sma_50": ind.sma(b, 50)},
    "sma_200": lambda b: {"sma_200": ind.sma(b, 200)},
    "ema_20": lambda b: {"ema_20": ind.ema(b, 20)},
    "rsi_14": lambda b: {"rsi_14": ind.rsi(b, 14)},
    "macd": lambda b: dict(
        zip(("macd", "macd_signal", "macd_histogram"), ind.macd(b).values.T, strict=True)
    ),
    "bollinger": lambda b: {
        "bb_upper": (bb := ind.bollinger(b))["upper"],
        "bb_lower": bb["lower"],
        "bb_percent_b": bb["percent_b"],
    },
    "atr_14": lambda b: {"atr_14": ind.atr(b, 14)},
    "adx_14": lambda b: {
        "adx_14": (a := ind.adx(b))["adx"],
        "plus_di": a["plus_di"],
        "minus_di": a["minus_di"],
    },
    "stochastic": lambda b: {"stoch_k": (s := ind.stochastic(b))["k"], "stoch_d": s["d"]},
    "obv": lambda b: {"obv": ind.obv(b)},
    "vwap_20": lambda b: {"vwap_20": ind.vwap(b, 20)},
    "hv_20": lambda b: {"hv_20": hv_close_to_close(b, 20)},
}


def indicator_snapshot(bars: pd.DataFrame) -> IndicatorSnapshot:
    """Latest value of each common indicator, explaining every one that is missing.

    Args:
        bars: Daily bars; close-only series get the close-based indicators.

    Returns:
        The snapshot; an indicator that cannot be computed is ``None`` and listed in
        ``unavailable`` with the reason.
    """
    close = as_close(bars, min_bars=1, what="indicator snapshot")
    values: dict[str, float | None] = {}
    unavailable: dict[str, str] = {}
    for name, compute in _SERIES.items():
        try:
            series = compute(bars)
        except AnalyticsError as exc:
            unavailable[name] = str(exc)
            continue
        for key, s in series.items():
            values[key] = _last(s)
            if values[key] is None:
                unavailable[key] = "undefined at the last bar (e.g. no price movement)"
    return IndicatorSnapshot(
        as_of=close.index[-1], close=float(close.iloc[-1]), unavailable=unavailable, **values
    )

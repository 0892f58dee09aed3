"""Pure numerics over daily bars: indicators, levels, patterns, options math, metrics.

No I/O, no model calls, nothing else from alphadesk. Inputs are pandas DataFrames of daily
bars with a tz-aware, increasing DatetimeIndex and lower-case columns ``open``, ``high``,
``low``, ``close``, ``volume`` (close-only series are accepted where a computation can do
without the range, and say so). Bad input raises a subclass of ``ValueError`` from
:mod:`alphadesk.analytics.errors` whose message says how to fix it.

Modules, by responsibility:

* :mod:`.options` — Black–Scholes–Merton price, Greeks, implied volatility; break-even,
  probability of profit, return on capital, expected move.
* :mod:`.volatility` — historical volatility estimators; IV rank and percentile.
* :mod:`.indicators` — TA-Lib indicators; :mod:`.candles` — candlestick patterns;
  :mod:`.snapshot` — the latest value of each indicator in one result.
* :mod:`.swings` — swing points and Fibonacci levels; :mod:`.levels` — support and
  resistance, extension, confluence; :mod:`.trend` — trendlines, trend assessment.
* :mod:`.patterns` — chart patterns.
* :mod:`.performance` — returns, CAGR, Sharpe, Sortino, drawdown and the rest.
* :mod:`.sentiment` — Loughran–McDonald text sentiment.
"""

from ._memo import shared_intermediates
from .candles import CANDLE_PATTERNS, CandleSignal, candlestick_patterns
from .errors import AnalyticsError, InsufficientData, InvalidInput, MissingColumns
from .indicators import adx, atr, bollinger, ema, kdj, macd, obv, rsi, sma, stochastic, vwap
from .levels import (
    ConfluenceZone,
    Extension,
    SupportResistance,
    Zone,
    confluence_zones,
    extension_from_support,
    support_resistance,
)
from .options import (
    ExpectedMove,
    Greeks,
    ReturnOnCapital,
    breakeven,
    bs_greeks,
    bs_price,
    csp_return_on_capital,
    expected_move,
    implied_vol,
    short_put_pop,
)
from .patterns import (
    ChartPattern,
    detect_patterns,
    double_tops_bottoms,
    flags,
    head_and_shoulders,
    triangles_channels,
)
from .performance import (
    BacktestMetrics,
    Drawdown,
    PerformanceStats,
    annualized_volatility,
    backtest_metrics,
    cagr,
    max_drawdown,
    performance_stats,
    profit_factor,
    returns_from_equity,
    sharpe_ratio,
    sortino_ratio,
    win_rate,
)
from .sentiment import SentimentScore, lm_sentiment
from .snapshot import IndicatorSnapshot, indicator_snapshot
from .swings import (
    FibLevel,
    FibLevels,
    SwingPoint,
    SwingPoints,
    fibonacci_from_bars,
    fibonacci_levels,
    swing_points,
    zigzag,
)
from .trend import TrendAssessment, Trendline, trend_assessment, trendline
from .volatility import (
    HistoricalVol,
    IVRank,
    historical_volatility,
    hv_close_to_close,
    hv_garman_klass,
    hv_parkinson,
    hv_rogers_satchell,
    hv_yang_zhang,
    iv_rank,
)

__all__ = [
    "CANDLE_PATTERNS",
    "AnalyticsError",
    "BacktestMetrics",
    "CandleSignal",
    "ChartPattern",
    "ConfluenceZone",
    "Drawdown",
    "ExpectedMove",
    "Extension",
    "FibLevel",
    "FibLevels",
    "Greeks",
    "HistoricalVol",
    "IVRank",
    "IndicatorSnapshot",
    "InsufficientData",
    "InvalidInput",
    "MissingColumns",
    "PerformanceStats",
    "ReturnOnCapital",
    "SentimentScore",
    "SupportResistance",
    "SwingPoint",
    "SwingPoints",
    "TrendAssessment",
    "Trendline",
    "Zone",
    "adx",
    "annualized_volatility",
    "atr",
    "backtest_metrics",
    "bollinger",
    "breakeven",
    "bs_greeks",
    "bs_price",
    "cagr",
    "candlestick_patterns",
    "confluence_zones",
    "csp_return_on_capital",
    "detect_patterns",
    "double_tops_bottoms",
    "ema",
    "expected_move",
    "extension_from_support",
    "fibonacci_from_bars",
    "fibonacci_levels",
    "flags",
    "head_and_shoulders",
    "historical_volatility",
    "hv_close_to_close",
    "hv_garman_klass",
    "hv_parkinson",
    "hv_rogers_satchell",
    "hv_yang_zhang",
    "implied_vol",
    "indicator_snapshot",
    "iv_rank",
    "kdj",
    "lm_sentiment",
    "macd",
    "max_drawdown",
    "obv",
    "performance_stats",
    "profit_factor",
    "returns_from_equity",
    "rsi",
    "shared_intermediates",
    "sharpe_ratio",
    "short_put_pop",
    "sma",
    "sortino_ratio",
    "stochastic",
    "support_resistance",
    "swing_points",
    "trend_assessment",
    "trendline",
    "triangles_channels",
    "vwap",
    "win_rate",
    "zigzag",
]

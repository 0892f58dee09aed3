"""Market tools: fundamentals by filing date, a market snapshot, and a stock screener.

* ``get_fundamentals`` — statements, ratios and valuation as filed by the run's instant
  (defined in :mod:`alphadesk.tools.fundamentals`, re-exported here).
* ``get_market_data`` — the index (or ETF) price and change, the VIX (or, when the VIX is
  unavailable, the S&P 500's 20-day realised volatility as a labelled proxy) and whether
  the New York market is open at the run's instant.
* ``stock_screener`` — the provider's universe filtered by price, trend, historical
  volatility and average volume, ranked and capped.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, Field

from alphadesk.agent import ModelRetry, RunContext, Toolset, tool
from alphadesk.analytics.errors import AnalyticsError
from alphadesk.analytics.indicators import rsi
from alphadesk.analytics.trend import trend_assessment
from alphadesk.analytics.volatility import historical_volatility
from alphadesk.data.base import MarketData
from alphadesk.data.calendar import market_status
from alphadesk.data.errors import DataError
from alphadesk.data.models import AssetType
from alphadesk.tools.common import (
    Source,
    ToolOutput,
    adjusted_frame,
    round_pct,
    round_price,
    source_of,
    try_market,
)
from alphadesk.tools.deps import ToolDeps
from alphadesk.tools.fundamentals import (
    FUNDAMENTALS_TOOLS,
    FundamentalsReport,
    KeyFigure,
    get_fundamentals,
)
from alphadesk.tools.once import once_per_step

if TYPE_CHECKING:
    from alphadesk.data.bars import Bars

__all__ = [
    "FUNDAMENTALS_TOOLS",
    "MARKET_TOOLS",
    "FundamentalsReport",
    "KeyFigure",
    "MarketSnapshot",
    "ScreenRow",
    "ScreenerReport",
    "get_fundamentals",
    "get_market_data",
    "stock_screener",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")
_SP500, _VIX = "^GSPC", "^VIX"
_SCREEN_HISTORY = timedelta(days=420)  # a 200-day average plus its slope, with holidays
_MAX_SCREEN_SYMBOLS = 60
_MAX_SKIPPED_LISTED = 10


# -- get_market_data -----------------------------------------------------------------------


class MarketSnapshot(ToolOutput):
    """Price, volatility and market hours at the run's instant."""

    price: float | None = None
    price_at: datetime | None = Field(None, description="When the price was set.")
    previous_close: float | None = None
    change: float | None = None
    change_pct: float | None = None
    volatility_level: float | None = Field(
        None, description="VIX in points, or the proxy in the same units (annualised %)."
    )
    volatility_source: Literal["vix", "sp500_realized_vol_20d"] | None = None
    volatility_at: datetime | None = None
    volatility_change: float | None = Field(None, description="VIX vs its previous close.")
    market_open: bool
    session: date | None = Field(None, description="The session in progress, if open.")
    next_open: datetime
    next_close: datetime
    last_close: datetime = Field(description="The most recent session close.")


async def _last_two(ctx: RunContext[ToolDeps], symbol: str) -> tuple[Bars | None, str | None]:
    start = (ctx.as_of - timedelta(days=45)).date()
    return await try_market(
        ctx, symbol, f"{symbol} bars", ctx.deps.market.daily_bars, symbol, ctx.as_of, start=start
    )


def _closes(bars: Bars) -> tuple[float, float | None, datetime]:
    prices = bars.prices()
    previous = float(prices.iloc[-2]) if len(prices) > 1 else None
    return float(prices.iloc[-1]), previous, prices.index[-1].to_pydatetime()


async def _volatility(ctx: RunContext[ToolDeps], missing: list[str]) -> dict[str, Any]:
    vix, reason = await _last_two(ctx, _VIX)
    if vix is not None and len(vix.prices()):
        level, previous, at = _closes(vix)
        change = round(level - previous, 2) if previous is not None else None
        return {
            "volatility_level": round(level, 2),
            "volatility_source": "vix",
            "volatility_at": at,
            "volatility_change": change,
        }
    missing.append(str(reason))
    spx, spx_reason = await try_market(
        ctx,
        _SP500,
        "S&P 500 bars",
        ctx.deps.market.daily_bars,
        _SP500,
        ctx.as_of,
        start=(ctx.as_of - timedelta(days=60)).date(),
    )
    if spx is None:
        missing.append(f"volatility proxy: {spx_reason}")
        return {}
    try:
        hv = historical_volatility(spx.prices(), 20).value
    except AnalyticsError as exc:
        missing.append(f"volatility proxy: {exc}")
        return {}
    return {
        "volatility_level": round(hv * 100.0, 2),
        "volatility_source": "sp500_realized_vol_20d",
        "volatility_at": spx.last_time,
    }


@tool
@once_per_step
async def get_market_data(ctx: RunContext[ToolDeps], symbol: str = _SP500) -> MarketSnapshot:
    """Market conditions: index price and change, VIX level, market open or closed.

    At the run's instant: the index (or ETF) price and its change from the previous close,
    the VIX level and change (or, when no VIX is available, the S&P 500's 20-day realised
    volatility in the same units, labelled by volatility_source), and whether the New York
    market is open, with the next open and close.

    Args:
        symbol: Index or ETF to quote: the S&P 500 index ^GSPC by default; SPY or QQQ
            where the provider has them.
    """
    status = market_status(ctx.as_of)
    missing: list[str] = []
    fields: dict[str, Any] = {}
    bars, reason = await _last_two(ctx, symbol)
    if bars is not None and len(bars.prices()):
        price, previous, at = _closes(bars)
        change = price - previous if previous else None
        fields |= {
            "symbol": bars.symbol,
            "source": source_of(bars.provenance, bars.basis),
            "price": round_price(price),
            "price_at": at,
            "previous_close": round_price(previous),
            "change": round_price(change),
            "change_pct": round_pct(change / previous * 100.0)
            if change is not None and previous
            else None,
        }
    else:
        missing.append(str(reason))
    fields |= await _volatility(ctx, missing)
    return MarketSnapshot(
        **({"symbol": symbol.upper()} | fields),
        as_of=ctx.as_of,
        missing=missing,
        market_open=status.is_open,
        session=status.session,
        next_open=status.next_open,
        next_close=status.next_close,
        last_close=status.previous_close,
    )


# -- stock_screener ------------------------------------------------------------------------

Trend = Literal["any", "up", "down", "sideways", "not_down"]
ScreenSort = Literal["trend_score", "hv", "price", "avg_volume", "change_1m", "rsi"]


class ScreenRow(BaseModel):
    """One symbol that passed the screen."""

    symbol: str
    name: str | None = None
    asset_type: str | None = None
    price: float = Field(description="Last close (as traded, not adjusted).")
    change_1m_pct: float | None = Field(None, description="Over 21 sessions, adjusted, %.")
    hv: float | None = Field(None, description="20-day close-to-close HV, decimal.")
    avg_volume: float | None = Field(None, description="Mean daily shares, 20 sessions.")
    trend: Literal["up", "down", "sideways"]
    trend_quality: Literal["strong", "moderate", "weak"]
    trend_score: float = Field(description="-1 (down) to 1 (up).")
    rsi_14: float | None = Field(None, description="RSI(14) of the adjusted closes.")


class ScreenerReport(BaseModel):
    """The symbols of the universe meeting every criterion, ranked and capped."""

    as_of: datetime
    source: list[Source] = Field(default_factory=list, description="Who served the bars.")
    criteria: dict[str, Any]
    universe_size: int
    evaluated: int = Field(description="Symbols with enough data at as_of to be screened.")
    matched: int
    results: list[ScreenRow] = Field(description="Best first by sort_by.")
    skipped: list[str] = Field(default_factory=list, description="Why some were not screened.")
    missing: list[str] = Field(default_factory=list)


def _screen_one(market: MarketData, symbol: str, as_of: datetime) -> tuple[ScreenRow, Source]:
    bars = market.daily_bars(symbol, as_of, start=(as_of - _SCREEN_HISTORY).date())
    frame = adjusted_frame(bars)
    trend = trend_assessment(frame)
    close = frame["close"]
    name = kind = None
    try:
        identity = market.instrument(symbol, as_of)
        name, kind = identity.name, identity.asset_type
    except DataError:
        logger.debug("%s: no identity", symbol)
    volume = frame["volume"].iloc[-20:].mean() if "volume" in frame else math.nan
    row = ScreenRow(
        symbol=bars.symbol,
        name=name,
        asset_type=kind,
        price=round(_closes(bars)[0], 4),
        change_1m_pct=round_pct((close.iloc[-1] / close.iloc[-22] - 1.0) * 100.0)
        if len(close) > 21
        else None,
        hv=round(historical_volatility(close, 20).value, 4),
        trend=trend.direction,
        avg_volume=round(float(volume)) if math.isfinite(volume) else None,
        trend_quality=trend.quality,
        trend_score=round(trend.score, 3),
        rsi_14=_last_rsi(close),
    )
    return row, source_of(bars.provenance, bars.basis)


def _last_rsi(close: Any) -> float | None:
    try:
        value = float(rsi(close, 14).iloc[-1])
    except AnalyticsError:
        return None
    return round(value, 2) if math.isfinite(value) else None


def _passes(row: ScreenRow, c: dict[str, Any]) -> bool:
    wanted = c["trend"]
    trend_ok = {"any": True, "not_down": row.trend != "down"}.get(wanted, row.trend == wanted)
    checks = [
        trend_ok,
        row.asset_type is None or row.asset_type in c["asset_types"],  # unknown: kept
        c["min_price"] is None or row.price >= c["min_price"],
        c["max_price"] is None or row.price <= c["max_price"],
        c["min_hv"] is None or (row.hv is not None and row.hv >= c["min_hv"]),
        c["max_hv"] is None or (row.hv is not None and row.hv <= c["max_hv"]),
        c["min_avg_volume"] is None
        or (row.avg_volume is not None and row.avg_volume >= c["min_avg_volume"]),
        c["min_rsi"] is None or (row.rsi_14 is not None and row.rsi_14 >= c["min_rsi"]),
        c["max_rsi"] is None or (row.rsi_14 is not None and row.rsi_14 <= c["max_rsi"]),
    ]
    return all(checks)


def _universe(market: MarketData, symbols: list[str] | None) -> list[str]:
    universe = (
        list(dict.fromkeys(s.strip().upper() for s in symbols)) if symbols else market.universe()
    )
    if not universe:
        raise ModelRetry("the data provider cannot list its symbols; pass them in symbols")
    if len(universe) > _MAX_SCREEN_SYMBOLS:
        raise ModelRetry(f"screen at most {_MAX_SCREEN_SYMBOLS} symbols per call")
    return universe


def _rank_key(sort_by: str, ascending: bool) -> Callable[[ScreenRow], tuple[bool, float]]:
    field = {"change_1m": "change_1m_pct", "rsi": "rsi_14"}.get(sort_by, sort_by)

    def key(row: ScreenRow) -> tuple[bool, float]:
        value = getattr(row, field)
        if value is None:
            return True, 0.0  # unknown values sort last either way
        return False, value if ascending else -value

    return key


def _screen(
    market: MarketData, symbols: list[str], as_of: datetime
) -> tuple[list[ScreenRow], list[Source], list[str]]:
    rows: list[ScreenRow] = []
    sources: list[Source] = []
    skipped: list[str] = []
    for symbol in symbols:
        try:
            row, source = _screen_one(market, symbol, as_of)
        except (DataError, AnalyticsError) as exc:
            skipped.append(f"{symbol}: {type(exc).__name__}: {str(exc)[:160]}")
            continue
        rows.append(row)
        if source not in sources:
            sources.append(source)
    return rows, sources, skipped


@tool
async def stock_screener(
    ctx: RunContext[ToolDeps],
    min_price: Annotated[float, Field(ge=0)] | None = None,
    max_price: Annotated[float, Field(gt=0)] | None = None,
    trend: Trend = "any",
    min_hv: Annotated[float, Field(ge=0, le=5)] | None = None,
    max_hv: Annotated[float, Field(gt=0, le=5)] | None = None,
    min_avg_volume: Annotated[float, Field(ge=0)] | None = None,
    min_rsi: Annotated[float, Field(ge=0, le=100)] | None = None,
    max_rsi: Annotated[float, Field(ge=0, le=100)] | None = None,
    asset_types: list[AssetType] | None = None,
    symbols: list[str] | None = None,
    sort_by: ScreenSort = "trend_score",
    ascending: bool = False,
    limit: Annotated[int, Field(ge=1, le=25)] = 10,
) -> ScreenerReport:
    """Stock screener: symbols meeting price, trend, volatility, volume and RSI criteria, ranked.

    Screens the data provider's universe (or the symbols given) at the run's instant and
    returns those meeting every criterion, ranked by sort_by and capped at limit, each
    with its price, one-month change, 20-day historical volatility (annualised decimal),
    20-day average volume, trend (direction, quality, score from -1 to 1) and RSI(14).

    Args:
        min_price: Lowest last close.
        max_price: Highest last close.
        trend: any, up, down, sideways or not_down (up or sideways).
        min_hv: Lowest 20-day historical volatility, decimal (0.25 = 25 %).
        max_hv: Highest 20-day historical volatility, decimal.
        min_avg_volume: Lowest 20-day average daily volume, in shares.
        min_rsi: Lowest RSI(14), e.g. 70 for "RSI above 70" (overbought).
        max_rsi: Highest RSI(14), e.g. 30 for "RSI below 30" (oversold).
        asset_types: Only these kinds; equities and ETFs when omitted (pass e.g.
            ["index", "crypto"] for others). Symbols of unknown kind are kept.
        symbols: Screen these symbols instead of the whole universe (at most 60).
        sort_by: trend_score, hv, price, avg_volume, change_1m or rsi.
        ascending: Sort smallest first instead of largest first.
        limit: Most symbols returned.
    """
    if min_price is not None and max_price is not None and min_price > max_price:
        raise ModelRetry(f"min_price ({min_price}) must not exceed max_price ({max_price})")
    if min_hv is not None and max_hv is not None and min_hv > max_hv:
        raise ModelRetry(f"min_hv ({min_hv}) must not exceed max_hv ({max_hv})")
    if min_rsi is not None and max_rsi is not None and min_rsi > max_rsi:
        raise ModelRetry(f"min_rsi ({min_rsi}) must not exceed max_rsi ({max_rsi})")
    universe = _universe(ctx.deps.market, symbols)
    criteria: dict[str, Any] = {
        "min_price": min_price,
        "max_price": max_price,
        "trend": trend,
        "min_hv": min_hv,
        "max_hv": max_hv,
        "min_avg_volume": min_avg_volume,
        "min_rsi": min_rsi,
        "max_rsi": max_rsi,
        "asset_types": list(asset_types) if asset_types else ["equity", "etf"],
        "sort_by": sort_by,
        "ascending": ascending,
    }
    rows, sources, skipped = await asyncio.to_thread(_screen, ctx.deps.market, universe, ctx.as_of)
    matched = sorted((r for r in rows if _passes(r, criteria)), key=_rank_key(sort_by, ascending))
    missing = []
    if min_avg_volume is not None and any(r.avg_volume is None for r in rows):
        missing.append("volume: some series have none and fail min_avg_volume")
    more = len(skipped) - _MAX_SKIPPED_LISTED
    return ScreenerReport(
        as_of=ctx.as_of,
        source=sources,
        criteria=criteria,
        universe_size=len(universe),
        evaluated=len(rows),
        matched=len(matched),
        results=matched[:limit],
        skipped=skipped[:_MAX_SKIPPED_LISTED] + ([f"... and {more} more"] if more > 0 else []),
        missing=missing,
    )


MARKET_TOOLS = Toolset.of("market", [get_market_data, stock_screener])

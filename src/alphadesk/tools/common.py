"""What every market toolset shares: the output envelope, periods and data loading.

Offers:

* :class:`ToolOutput` — the envelope every tool output extends: ``symbol``, ``as_of`` (the
  run's instant), ``source`` (:class:`Source`: provider and observed/modeled) and
  ``missing`` (data the answer lacked, in words, e.g. ``"volume"``).
* :data:`Period` and :data:`PERIODS` — the look-back windows a tool accepts
  (``"1mo" "3mo" "6mo" "1y" "2y"``), :func:`period_start` the first date of one.
* :func:`load_daily_bars` — daily bars of a period at ``ctx.as_of``, read through
  ``asyncio.to_thread``, with optional warm-up history for indicators.
* :func:`call_market` — any other ``MarketData`` method (quote, option chain, news...)
  through ``asyncio.to_thread`` with the same error mapping.
* :func:`retry_or_raise` — the error mapping itself: a :class:`DataError` the model can
  fix becomes :class:`ModelRetry` — a malformed symbol, or an unknown one (the data layer
  found close matches, which the retry names, or every provider lists its symbols and none
  holds it); any other (no data at this instant, provider down, not configured) is
  re-raised unchanged so the run reports it clearly.
* :func:`traded_frame` and :func:`adjusted_frame` — the analytics layer's frame from
  :class:`Bars`: prices as traded (levels, charts, anything compared with a spot price or a
  strike) or scaled to the adjusted close (returns, volatility and trend across splits).
* :func:`source_of`, :func:`missing_fields`, :func:`round_price`, :func:`round_pct` —
  small helpers to fill the envelope and round numbers consistently.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, NoReturn, TypeVar, get_args

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from alphadesk.agent import ModelRetry, RunContext
from alphadesk.data.errors import DataError, InvalidSymbol, NoData
from alphadesk.data.models import Provenance
from alphadesk.data.symbols import close_matches, normalize_symbol
from alphadesk.tools.deps import ToolDeps

if TYPE_CHECKING:
    import pandas as pd

    from alphadesk.data.bars import Bars

__all__ = [
    "PERIODS",
    "PERIOD_DAYS",
    "Period",
    "Source",
    "ToolOutput",
    "absent",
    "adjusted_frame",
    "call_market",
    "load_daily_bars",
    "missing_fields",
    "period_start",
    "retry_or_raise",
    "round_pct",
    "round_price",
    "source_of",
    "traded_frame",
    "try_market",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")
OutputT = TypeVar("OutputT", bound="ToolOutput")

Period = Literal["1mo", "3mo", "6mo", "1y", "2y"]
PERIODS: tuple[str, ...] = get_args(Period)
# Calendar days per period (a little over, so "1y" holds a full 252-session year).
PERIOD_DAYS: dict[str, int] = {"1mo": 31, "3mo": 92, "6mo": 183, "1y": 366, "2y": 731}


class Source(BaseModel):
    """Who answered and whether the numbers were observed in a market or modeled."""

    model_config = ConfigDict(frozen=True)

    provider: str = Field(description="The provider that answered, e.g. bundled or yahoo.")
    origin: Literal["observed", "modeled"] = Field(description="observed or modeled data.")
    basis: str = Field(
        "",
        description="What the price levels are relative to corporate actions, e.g. as traded "
        "on the as-of date with earlier bars adjusted for the splits up to it.",
    )


class ToolOutput(BaseModel):
    """The envelope of every market tool's output."""

    symbol: str = Field(description="Canonical symbol the output is about.")
    as_of: AwareDatetime = Field(description="The run's instant; nothing later was used.")
    source: Source | None = Field(None, description="Where the data came from.")
    missing: list[str] = Field(
        default_factory=list, description="Data that was missing and what that changed."
    )


def source_of(provenance: Provenance, basis: str = "") -> Source:
    """The :class:`Source` of a data result's provenance (and of its bars' price basis)."""
    return Source(provider=provenance.provider, origin=provenance.origin, basis=basis)


def missing_fields(bars: Bars, *, ranges: str = "ranges use closes") -> list[str]:
    """The bar fields the source lacks, in words (empty for a full OHLCV series).

    Args:
        bars: The bars a tool used.
        ranges: What a close-only series changes for the caller, e.g.
            ``"swing points use closes"``.
    """
    lacking = set(bars.missing)
    notes: list[str] = []
    if {"high", "low"} <= lacking:
        notes.append(f"high/low: close-only series, {ranges}")
    elif lacking & {"high", "low"}:
        notes.append(f"{'/'.join(sorted(lacking & {'high', 'low'}))}: {ranges}")
    if "open" in lacking:
        notes.append("open")
    if "close" in lacking and "adj_close" not in lacking:
        notes.append("close: the adjusted close is used")
    if "volume" in lacking:
        notes.append("volume")
    return notes


def traded_frame(bars: Bars) -> pd.DataFrame:
    """The analytics frame at the prices that traded: ``open high low close volume``.

    Use it for price *levels*: the current price, support and resistance, swing points,
    charts, anything compared with a spot price or a strike. Across a split its returns
    jump (a 2:1 split reads as a 50 % drop): for volatility, returns or a trend over a
    window that may hold a split use :func:`adjusted_frame`.

    ``close`` is the adjusted close on an adjusted-close-only series; columns the source
    lacks are left out, and rows with a gap in a present column are dropped.
    """
    import numpy as np
    import pandas as pd

    price = bars.price_field()
    order = [*(c for c in ("open", "high", "low") if c in bars.fields), price]
    order += ["volume"] if "volume" in bars.fields else []
    names = ["close" if c == price else c for c in order]
    # One array in the final order (the bars' columns are all float64) and one frame built
    # from it: selecting columns of a frame costs half a millisecond, and every chart tool
    # calls this.
    columns = bars.frame.columns.tolist()  # a list: pandas' column lookups cost more
    values = bars.frame.to_numpy(dtype=np.float64)[:, [columns.index(c) for c in order]]
    index = bars.frame.index
    gaps = np.isnan(values).any(axis=1)
    if gaps.any():
        logger.info("%s: dropped %d bar(s) with gaps", bars.symbol, int(gaps.sum()))
        values, index = values[~gaps], index[~gaps]
    # Plain labels: pandas' default string index makes every column lookup slower.
    return pd.DataFrame(values, index=index, columns=pd.Index(names, dtype=object), copy=False)


def adjusted_frame(bars: Bars) -> pd.DataFrame:
    """The analytics frame scaled to the adjusted close, for statistics of returns.

    Use it for volatility, returns and trend over a window that may hold a split or a
    dividend: ``open high low close`` of :func:`traded_frame` are multiplied by
    ``adj_close / close``, so a split does not read as a price jump. Its levels are scaled
    by the dividends paid between each bar and ``as_of`` (the data layer rebases
    ``adj_close`` to the close of ``as_of``): never report them as prices or compare them
    with a spot price or a strike. Volume is left as traded. Bars
    without both ``close`` and ``adj_close`` are returned as :func:`traded_frame` gives them.
    """
    frame = traded_frame(bars)
    if {"close", "adj_close"} <= bars.fields:
        factor = (bars.frame["adj_close"] / bars.frame["close"]).reindex(frame.index)
        for column in ("open", "high", "low", "close"):
            if column in frame:
                frame[column] = frame[column] * factor
        frame = frame.dropna()
    return frame


def period_start(as_of: datetime, period: str, *, warmup_bars: int = 0) -> date:
    """The first calendar date of ``period`` ending at ``as_of``, plus warm-up history.

    Args:
        as_of: The run's instant.
        period: One of :data:`PERIODS`.
        warmup_bars: Extra sessions to load before the period (for indicators).
    """
    if period not in PERIOD_DAYS:
        raise ModelRetry(f"period {period!r} is not one of {', '.join(PERIODS)}")
    # ~252 sessions a year: 1.5 calendar days per session plus a holiday margin.
    extra = math.ceil(warmup_bars * 1.5) + (10 if warmup_bars else 0)
    return (as_of - timedelta(days=PERIOD_DAYS[period] + extra)).date()


def retry_or_raise(error: DataError, symbol: str, ctx: RunContext[ToolDeps]) -> NoReturn:
    """Turn ``error`` into :class:`ModelRetry` when the model can fix it, else re-raise it.

    The model can fix a malformed symbol or one no provider knows (it is told the close
    matches); it cannot fix missing history at the run's instant or a provider outage.
    """
    if isinstance(error, InvalidSymbol):
        raise ModelRetry(str(error)) from error
    if isinstance(error, NoData):
        listed, complete = _listings(ctx)
        known = _canonical(symbol) in listed
        # A provider's suggestions mean that provider does not know the symbol, not that
        # none does: a listed symbol missing one kind of data (no SEC facts) is no typo.
        unknown = not known and (bool(error.suggestions) or complete)
        listed_matches = close_matches(_canonical(symbol), sorted(listed))
        matches = list(dict.fromkeys([*listed_matches, *error.suggestions]))
        if unknown:
            hint = f"close matches: {', '.join(matches)}" if matches else "no close match"
            raise ModelRetry(
                f"unknown symbol {symbol!r} ({hint}); call again with a listed symbol. "
                f"Detail: {error}"
            ) from error
    logger.info("data error for %s surfaced to the run: %s", symbol, error)
    raise error


async def call_market(
    ctx: RunContext[ToolDeps], symbol: str, method: Callable[..., T], *args: Any, **kwargs: Any
) -> T:
    """Call a synchronous ``MarketData`` method in a thread, mapping its errors.

    Args:
        ctx: The tool's run context (for the symbol universe when mapping errors).
        symbol: The symbol the model asked about (used in the retry message).
        method: A bound provider method, e.g. ``ctx.deps.market.quote``.
        *args: Positional arguments of ``method``.
        **kwargs: Keyword arguments of ``method``.
    """
    try:
        return await asyncio.to_thread(method, *args, **kwargs)
    except DataError as exc:
        retry_or_raise(exc, symbol, ctx)


def absent(
    cls: type[OutputT], ctx: RunContext[ToolDeps], symbol: str, reason: str | None, **fields: Any
) -> OutputT:
    """The output of a tool whose data is missing: ``available=False`` and why."""
    return cls(
        symbol=symbol.upper(), as_of=ctx.as_of, available=False, missing=[str(reason)], **fields
    )


async def try_market(
    ctx: RunContext[ToolDeps],
    symbol: str,
    what: str,
    method: Callable[..., T],
    *args: Any,
    **kwargs: Any,
) -> tuple[T | None, str | None]:
    """Like :func:`call_market`, but data a provider lacks is an answer, not an error:
    ``(result, None)``, or ``(None, "<what>: <why>")`` for the tool's ``missing`` list. A
    symbol the model can fix is still a retry."""
    try:
        return await call_market(ctx, symbol, method, *args, **kwargs), None
    except DataError as exc:
        return None, f"{what}: {exc}"


async def load_daily_bars(
    ctx: RunContext[ToolDeps], symbol: str, period: str, *, warmup_bars: int = 0
) -> Bars:
    """Daily bars of ``symbol`` over ``period`` ending at ``ctx.as_of`` (plus warm-up).

    Args:
        ctx: The tool's run context; ``ctx.deps.market`` answers, ``ctx.as_of`` bounds it.
        symbol: Ticker as the model passed it.
        period: One of :data:`PERIODS`.
        warmup_bars: Extra sessions before the period, e.g. 200 for a 200-day average.

    Raises:
        ModelRetry: A malformed or unknown symbol, or an unknown period.
        DataError: Anything else from the data layer (no data at as_of, provider down).
    """
    start = period_start(ctx.as_of, period, warmup_bars=warmup_bars)
    market = ctx.deps.market
    return await call_market(ctx, symbol, market.daily_bars, symbol, ctx.as_of, start=start)


def round_price(value: float | None) -> float | None:
    """A price rounded for a model: 2 decimals, 4 below 10, 6 below 0.1 (None stays)."""
    if value is None or not math.isfinite(value):
        return None
    size = abs(value)
    digits = 2 if size >= 10 else 4 if size >= 0.1 else 6
    return round(float(value), digits)


def round_pct(value: float | None, digits: int = 2) -> float | None:
    """A percentage (already x100) rounded to ``digits`` (None and NaN become None)."""
    if value is None or not math.isfinite(value):
        return None
    return round(float(value), digits)


def _canonical(symbol: str) -> str:
    try:
        return normalize_symbol(symbol)
    except InvalidSymbol:
        return symbol


def _listings(ctx: RunContext[ToolDeps]) -> tuple[set[str], bool]:
    """The symbols some provider of the market lists, and whether every provider lists
    its own (without a complete list an absent symbol may still exist: a network provider
    lists nothing, so its absence is not the model's to fix)."""
    market = ctx.deps.market
    members = getattr(market, "providers", None) or [market]
    try:
        listings = [list(p.universe()) for p in members]
    except Exception:  # a listing is only a hint; never let it mask the real error
        logger.debug("universe() failed", exc_info=True)
        return set(), False
    return {s for listing in listings for s in listing}, all(listings)

"""``get_price_history``: a summary of a symbol's prices over a period, with the last bars."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from alphadesk.agent import RunContext, tool
from alphadesk.tools.chart.models import PriceBar, PriceHistory
from alphadesk.tools.chart.series import day, load_series, pct, price
from alphadesk.tools.common import Period, round_price
from alphadesk.tools.deps import ToolDeps

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["get_price_history"]

_TAIL_ROWS = 20


def _weekly(frame: pd.DataFrame) -> pd.DataFrame:
    """Weekly bars (weeks ending Friday), each stamped with its last session."""
    rules = {"open": "first", "high": "max", "low": "min", "close": "last", "volume": "sum"}
    week = frame.index.tz_localize(None).to_period("W-FRI")
    weekly = frame.groupby(week).agg({c: r for c, r in rules.items() if c in frame.columns})
    weekly.index = frame.index.to_series().groupby(week).last().to_numpy()
    return weekly


def _tail(frame: pd.DataFrame) -> list[PriceBar]:
    rows = []
    for stamp, row in frame.tail(_TAIL_ROWS).iterrows():
        values = {
            k: round_price(float(row[k]))
            for k in ("open", "high", "low", "close")
            if k in row.index
        }
        volume = round(float(row["volume"])) if "volume" in row.index else None
        rows.append(PriceBar(date=day(stamp), volume=volume, **values))
    return rows


@tool
async def get_price_history(
    ctx: RunContext[ToolDeps],
    symbol: str,
    period: Period = "6mo",
    interval: Literal["1d", "1wk"] = "1d",
) -> PriceHistory:
    """Summary of a symbol's daily prices over a period, with the most recent bars.

    Returns the first and last date, the current (last) close, the period's high and low
    with their dates, the change over the period, the average daily volume and the last
    20 bars (daily or weekly). Only bars closed at the analysis instant are used.

    Args:
        symbol: Ticker, e.g. "MSFT".
        period: How far back to look.
        interval: Bar size of the returned tail: daily ("1d") or weekly ("1wk").
    """
    s = await load_series(ctx, symbol, period)
    f, high, low = s.frame, s.highs, s.lows
    first_close = float(f["close"].iloc[0])
    return PriceHistory(
        **s.envelope(ctx, "period high/low use closes"),
        period=period,
        interval=interval,
        bars=len(f),
        first_date=day(f.index[0]),
        last_date=day(f.index[-1]),
        current_price=price(s.close),
        period_high=price(float(high.max())),
        period_high_date=day(high.idxmax()),
        period_low=price(float(low.min())),
        period_low_date=day(low.idxmin()),
        change_pct=pct(s.close - first_close, first_close),
        avg_volume=round(float(f["volume"].mean())) if "volume" in f else None,
        tail=_tail(f if interval == "1d" else _weekly(f)),
    )

"""``get_market_overview``: SPY, the S&P 500, the VIX and whether the market is open.

The seed's market snapshot for a 0DTE SPY trader: the index and VIX figures come from
:func:`alphadesk.tools.market.get_market_data` (one implementation), SPY from
:func:`alphadesk.data.spy.spy_price` (observed, or the index / 10, labelled), and the
session a same-day option would expire at from the exchange calendar.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from pydantic import Field

from alphadesk.agent import RunContext, tool
from alphadesk.data.calendar import local_date
from alphadesk.data.errors import DataError
from alphadesk.tools.common import ToolOutput, round_price
from alphadesk.tools.deps import ToolDeps
from alphadesk.tools.market import MarketSnapshot, get_market_data
from alphadesk.tools.options.zero_dte import spy_price

__all__ = ["MarketOverview", "get_market_overview"]


class MarketOverview(ToolOutput):
    """SPY, the S&P 500 and the VIX at the run's instant, and the market's hours."""

    spy_price: float | None = None
    spy_basis: str | None = Field(None, description="Observed SPY, or the index / 10.")
    spy_origin: Literal["observed", "modeled"] | None = Field(
        None, description="Whether the SPY price was traded or modeled from the index."
    )
    sp500: float | None = Field(None, description="S&P 500 index level.")
    sp500_change_pct: float | None = None
    price_at: datetime | None = None
    vix: float | None = Field(None, description="VIX level (or its labelled proxy).")
    vix_change: float | None = None
    volatility_source: str | None = None
    market_open: bool
    next_open: datetime
    next_close: datetime
    zero_dte_session: date = Field(
        description="The session a 0DTE option bought now expires at: today if open, "
        "else the next session."
    )


@tool
async def get_market_overview(ctx: RunContext[ToolDeps]) -> MarketOverview:
    """Market conditions for a SPY trader: SPY price, S&P 500, VIX, market open or closed.

    At the run's instant: SPY (observed, or modeled as the S&P 500 index / 10 when no
    provider has SPY, labelled), the index level and change, the VIX level and change,
    whether the New York market is open with the next open and close, and the session a
    0DTE option would expire at.
    """
    index: MarketSnapshot = await get_market_data.call(ctx, {"symbol": "^GSPC"})
    missing = list(index.missing)
    spy: dict[str, object] = {}
    try:
        price, _, basis, _, spy_missing = await spy_price(ctx)
        origin = "modeled" if "modeled" in basis else "observed"
        spy = {"spy_price": round_price(price), "spy_basis": basis, "spy_origin": origin}
        missing += spy_missing
    except DataError as exc:
        missing.append(f"SPY: {exc}")
    expiry_day = local_date(index.next_close)
    return MarketOverview(
        symbol="SPY",
        as_of=ctx.as_of,
        source=index.source,
        missing=missing,
        sp500=index.price,
        sp500_change_pct=index.change_pct,
        price_at=index.price_at,
        vix=index.volatility_level,
        vix_change=index.volatility_change,
        volatility_source=index.volatility_source,
        market_open=index.market_open,
        next_open=index.next_open,
        next_close=index.next_close,
        zero_dte_session=expiry_day,
        **spy,
    )

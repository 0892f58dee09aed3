"""The 0DTE SPY engine as a tool: a same-day strangle, put or call to sell, fully priced.

Inputs come from the data layer at the run's instant: SPY's price (observed when a
provider has SPY, else the S&P 500 index divided by ten, labelled: SPY tracks a tenth of
the index within about half a percent), the VIX as the at-the-money volatility (else the
index's 20-day realised volatility, labelled) and the T-bill rate. The trade is for the
session in progress, or the next one when the market is closed (entered at its open at
the last price). The option prices are always *modeled* (Black–Scholes with a put skew:
:mod:`alphadesk.analytics.zero_dte`), never an observed chain.
"""

from __future__ import annotations

import asyncio
from datetime import date, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from alphadesk.agent import ModelRetry, RunContext, Toolset, tool
from alphadesk.analytics.errors import AnalyticsError
from alphadesk.analytics.volatility import historical_volatility
from alphadesk.analytics.zero_dte import (
    SESSION_MINUTES,
    Selection,
    Strategy,
    VolSurface,
    ZeroDteTrade,
    build_zero_dte,
    payoff,
    session_years,
)
from alphadesk.data.calendar import local_date, market_status
from alphadesk.data.errors import DataError
from alphadesk.data.rates import risk_free_rate
from alphadesk.data.spy import spy_price as data_spy_price
from alphadesk.tools.common import Source, ToolOutput, round_pct, round_price
from alphadesk.tools.deps import ToolDeps

__all__ = ["ZERO_DTE_TOOLS", "ZeroDteLeg", "ZeroDteReport", "run_zero_dte_engine", "spy_price"]

_SPY, _INDEX, _VIX = "SPY", "^GSPC", "^VIX"
_HV_PREMIUM = 1.1  # implied over realised, when the VIX is missing


class ZeroDteLeg(BaseModel):
    """One option of the trade (per share; a contract is 100 shares)."""

    action: Literal["sell", "buy"]
    right: Literal["put", "call"]
    strike: float
    premium: float
    delta: float
    iv_pct: float = Field(description="The volatility it was priced at, percent.")
    prob_itm_pct: float = Field(description="Chance it ends in the money, percent.")


class ZeroDteReport(ToolOutput):
    """A priced 0DTE trade. All option figures are modeled, not observed quotes."""

    strategy: Strategy
    selection: str = Field(description="How the strikes were chosen.")
    underlying_price: float
    underlying_basis: str = Field(description="Observed SPY, or the index / 10 (modeled).")
    session: date = Field(description="The session whose close the options expire at.")
    entry_at: datetime
    expires_at: datetime
    minutes_to_expiry: int
    vix: float | None = Field(None, description="VIX level used, points.")
    atm_iv_pct: float
    volatility_basis: str
    rate_pct: float
    expected_move: float = Field(description="One-sigma move to the close, dollars.")
    expected_range: tuple[float, float]
    legs: list[ZeroDteLeg]
    contracts: int
    credit: float = Field(description="Net premium per share.")
    credit_total: float = Field(description="credit x 100 x contracts, dollars.")
    max_loss_total: float | None = Field(
        description="Worst loss at expiry in dollars; null when unlimited (a naked call)."
    )
    breakeven_low: float | None = None
    breakeven_high: float | None = None
    probability_of_profit_pct: float
    pnl_at_two_moves: dict[str, float] = Field(
        description="Dollar P&L at expiry two expected moves down and up."
    )
    notes: list[str] = Field(default_factory=list)


async def spy_price(
    ctx: RunContext[ToolDeps],
) -> tuple[float, datetime, str, Source, list[str]]:
    """SPY's price at the run's instant (:func:`alphadesk.data.spy.spy_price`).

    Returns:
        price, when it was set, its basis in words, its source, and what was missing.

    Raises:
        DataError: neither SPY nor the index has a price of that session (it is missing).
    """
    found = await asyncio.to_thread(data_spy_price, ctx.deps.market, ctx.as_of)
    source = Source(provider=found.provider, origin=found.origin)
    return found.price, found.observed_at, found.basis, source, found.missing


async def _volatility(ctx: RunContext[ToolDeps]) -> tuple[float, float | None, str, list[str]]:
    """At-the-money volatility (decimal), the VIX level, the basis and what was missing."""
    market = ctx.deps.market
    try:
        vix = await asyncio.to_thread(market.quote, _VIX, ctx.as_of)
    except DataError as exc:
        start = local_date(ctx.as_of).replace(day=1)
        bars = await asyncio.to_thread(
            market.daily_bars, _INDEX, ctx.as_of, start=start.replace(year=start.year - 1)
        )
        try:
            hv = historical_volatility(bars.return_prices(), 20).value
        except AnalyticsError as hv_error:
            raise DataError(f"no VIX ({exc}) and no realised volatility ({hv_error})") from exc
        basis = f"S&P 500 20-day realised volatility x {_HV_PREMIUM} (no VIX)"
        return hv * _HV_PREMIUM, None, basis, [f"VIX: {exc}"]
    return vix.price / 100.0, vix.price, f"VIX close of {vix.observed_at.date()}", []


def _timing(as_of: datetime) -> tuple[datetime, datetime, list[str]]:
    status = market_status(as_of)
    if status.is_open:
        return as_of, status.next_close, []
    note = (
        "the market is closed at the analysis instant: the trade is for the next session, "
        "entered at its open at the last price (an opening gap would move the strikes)"
    )
    return status.next_open, status.next_close, [note]


@tool
async def run_zero_dte_engine(
    ctx: RunContext[ToolDeps],
    strategy: Strategy = "strangle",
    selection: Selection = "delta",
    target_delta: Annotated[float, Field(gt=0.01, lt=0.5)] = 0.10,
    expected_move_multiple: Annotated[float, Field(ge=0.25, le=3.0)] = 1.0,
    wing_width: Annotated[float | None, Field(gt=0, le=50)] = None,
    contracts: Annotated[int, Field(ge=1, le=100)] = 1,
) -> ZeroDteReport:
    """The 0DTE SPY engine: a same-day strangle, put or call to sell, with its risk.

    Chooses the strikes (by delta, or a multiple of the expected move to the close) on
    SPY's $1 grid, prices them with Black-Scholes at the VIX with a put skew (modeled,
    not observed quotes) and returns the credit, max loss, break-evens, probability of
    profit and the P&L two expected moves away. Offline, SPY is the S&P 500 index / 10.

    Args:
        strategy: strangle (sell a put and a call), put_only or call_only.
        selection: delta (strikes nearest target_delta) or expected_move.
        target_delta: Absolute delta of each short strike, e.g. 0.10.
        expected_move_multiple: Distance of each strike in expected moves.
        wing_width: Buy protection this many dollars further out (iron condor or credit
            spread) to cap the loss; none sells naked options.
        contracts: How many of each option.
    """
    spot, spot_at, spot_basis, source, missing = await spy_price(ctx)
    atm, vix, vol_basis, vol_missing = await _volatility(ctx)
    rate = risk_free_rate(ctx.as_of)
    entry, expiry, notes = _timing(ctx.as_of)
    minutes = (expiry - entry).total_seconds() / 60.0
    try:
        trade = build_zero_dte(
            spot,
            session_years(minutes),
            rate.rate,
            VolSurface(atm_vol=atm),
            strategy,
            selection,
            target_delta=target_delta,
            move_multiple=expected_move_multiple,
            wing_width=wing_width,
        )
    except AnalyticsError as exc:
        raise ModelRetry(f"the 0DTE engine cannot build that trade: {exc}") from exc
    if minutes < SESSION_MINUTES:
        notes.append(f"{minutes:.0f} minutes of the session remain")
    notes += [
        "option prices are modeled (Black-Scholes at the VIX with a put skew), not quotes",
        f"price set at {spot_at.isoformat()}",
    ]
    if rate.note:
        notes.append(rate.note)
    context = {
        "session": local_date(expiry),
        "entry_at": entry,
        "expires_at": expiry,
        "minutes_to_expiry": round(minutes),
        "vix": vix,
        "volatility_basis": vol_basis,
        "rate_pct": round(rate.rate * 100, 3),
        "selection": (
            f"delta {target_delta:g}"
            if selection == "delta"
            else f"{expected_move_multiple:g} expected moves"
        ),
        "underlying_basis": spot_basis,
        "source": Source(provider=source.provider, origin="modeled"),
        "missing": missing + vol_missing,
        "notes": notes,
    }
    return _report(ctx, trade, contracts, context)


def _report(
    ctx: RunContext[ToolDeps], trade: ZeroDteTrade, contracts: int, context: dict[str, Any]
) -> ZeroDteReport:
    """The trade in dollars, rounded for reading, with its ``context`` (timing, sources)."""
    scale = 100 * contracts
    move = trade.expected_move
    return ZeroDteReport(
        **context,
        symbol=_SPY,
        as_of=ctx.as_of,
        strategy=trade.strategy,
        underlying_price=round(trade.spot, 2),
        atm_iv_pct=round(trade.atm_vol * 100, 2),
        expected_move=round(move.move, 2),
        expected_range=(round(move.lower, 2), round(move.upper, 2)),
        legs=[
            ZeroDteLeg(
                action="sell" if leg.side == "short" else "buy",
                right=leg.right,
                strike=leg.strike,
                premium=round(leg.premium, 2),
                delta=round(leg.delta, 3),
                iv_pct=round(leg.sigma * 100, 2),
                prob_itm_pct=round(leg.prob_itm * 100, 1),
            )
            for leg in trade.legs
        ],
        contracts=contracts,
        credit=round(trade.credit, 2),
        credit_total=round(trade.credit * scale, 2),
        max_loss_total=None if trade.max_loss is None else round(trade.max_loss * scale, 2),
        breakeven_low=round_price(trade.breakeven_low),
        breakeven_high=round_price(trade.breakeven_high),
        probability_of_profit_pct=round_pct(trade.pop * 100, 1) or 0.0,
        pnl_at_two_moves={
            "down": round(payoff(trade, trade.spot - 2 * move.move) * scale, 2),
            "up": round(payoff(trade, trade.spot + 2 * move.move) * scale, 2),
        },
    )


ZERO_DTE_TOOLS = Toolset.of("zero_dte", [run_zero_dte_engine])

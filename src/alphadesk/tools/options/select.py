"""The seller's options tools: return on capital of a cash-secured put, and filtering a
chain for the contracts worth selling. Also the chain access the options tools share."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field

from alphadesk.agent import ModelRetry, RunContext, tool
from alphadesk.analytics.options import csp_return_on_capital, short_put_pop
from alphadesk.data.errors import DataError
from alphadesk.data.models import OptionChain
from alphadesk.data.rates import risk_free_rate
from alphadesk.tools.common import (
    absent,
    source_of,
    try_market,
)
from alphadesk.tools.deps import ToolDeps
from alphadesk.tools.options.models import (
    FilteredOptions,
    OptionRow,
    OptionType,
    ReturnOnCapitalReport,
    option_row,
    round_to,
)

__all__ = ["calculate_roc", "chain_for", "filter_options"]

# -- data access ---------------------------------------------------------------------------


async def chain_for(
    ctx: RunContext[ToolDeps], symbol: str, dte_min: int, dte_max: int
) -> tuple[OptionChain | None, str | None]:
    if dte_min > dte_max:
        raise ModelRetry(f"dte_min ({dte_min}) must not exceed dte_max ({dte_max})")
    market = ctx.deps.market
    return await try_market(
        ctx,
        symbol,
        "option chain",
        market.option_chain,
        symbol,
        ctx.as_of,
        min_dte=dte_min,
        max_dte=dte_max,
    )


# -- calculate_roc -------------------------------------------------------------------------


async def _pop_inputs(
    ctx: RunContext[ToolDeps],
    symbol: str | None,
    underlying_price: float | None,
    missing: list[str],
) -> tuple[float | None, float]:
    """The underlying price (given, else the latest known close) and the risk-free rate."""
    try:
        rate = risk_free_rate(ctx.as_of).rate
    except DataError as exc:
        rate = 0.0
        missing.append(f"risk-free rate: {exc}; 0 used")
    if underlying_price is not None:
        return underlying_price, rate
    if symbol is None:
        missing.append("probability_of_profit: give underlying_price or symbol")
        return None, rate
    quote, reason = await try_market(ctx, symbol, "quote", ctx.deps.market.quote, symbol, ctx.as_of)
    if quote is None:
        missing.append(f"probability_of_profit: {reason}")
        return None, rate
    return quote.price, rate


@tool
async def calculate_roc(
    ctx: RunContext[ToolDeps],
    premium: Annotated[float, Field(gt=0)],
    strike: Annotated[float, Field(gt=0)],
    dte: Annotated[int, Field(ge=1, le=1095)],
    iv: Annotated[float, Field(gt=0, le=5)] | None = None,
    underlying_price: Annotated[float, Field(gt=0)] | None = None,
    symbol: str | None = None,
) -> ReturnOnCapitalReport:
    """Return on capital of selling a cash-secured put, breakeven and probability of profit.

    Returns per trade, weekly and annualised (percent of the strike), breakeven (strike -
    premium), capital and premium per 100-share contract and, when iv is given, the
    risk-neutral probability that the stock ends above breakeven (needs underlying_price,
    or a symbol to read its latest close).

    Args:
        premium: Premium received per share, e.g. the contract's mid.
        strike: Put strike: the cash secured per share.
        dte: Calendar days to expiration.
        iv: Implied volatility, annualised decimal (0.25 = 25 %), for the probability.
        underlying_price: Current stock price, for the probability.
        symbol: Underlying ticker, to read the price when underlying_price is not given.
    """
    if premium >= strike:
        raise ModelRetry(f"premium {premium} must be below the strike {strike} (per share)")
    result = csp_return_on_capital(premium, strike, dte)
    missing: list[str] = []
    report: dict[str, Any] = {"symbol": symbol.upper() if symbol else None, "as_of": ctx.as_of}
    if iv is not None:
        spot, rate = await _pop_inputs(ctx, symbol, underlying_price, missing)
        if spot is not None:
            years = dte / 365.0
            pop = float(short_put_pop(spot, strike, premium, years, rate, iv))
            report |= {
                "probability_of_profit": round(pop, 4),
                "pop_inputs": {
                    "underlying_price": spot,
                    "iv": iv,
                    "rate": round(rate, 5),
                    "years": round(years, 6),
                },
            }
    else:
        missing.append("probability_of_profit: pass iv to compute it")
    return ReturnOnCapitalReport(
        **report,
        premium=premium,
        strike=strike,
        dte=dte,
        roc=round(result.roc * 100.0, 4),
        weekly_roc=round(result.weekly * 100.0, 4),
        annualized_roc=round(result.annualized * 100.0, 3),
        annualized_compound_roc=round(result.annualized_compound * 100.0, 3),
        breakeven=round(strike - premium, 4),
        capital_per_contract=round(strike * 100.0, 2),
        premium_per_contract=round(premium * 100.0, 2),
        missing=missing,
    )


# -- filter_options ------------------------------------------------------------------------

SortKey = Literal["weekly_roc", "annualized_roc", "open_interest", "delta", "spread"]


def _failure(row: OptionRow, criteria: dict[str, Any]) -> str | None:
    """The first criterion ``row`` fails, or None."""
    if row.mid is None or row.mid <= 0:
        return "no_quote"
    if row.delta is None:
        return "no_delta"
    if not criteria["delta_min"] <= abs(row.delta) <= criteria["delta_max"]:
        return "delta"
    if (row.open_interest or 0) < criteria["min_open_interest"]:
        return "open_interest"
    limit = criteria["max_spread_pct"]
    if limit is not None and (row.spread_pct is None or row.spread_pct > limit):
        return "spread"
    if (row.weekly_roc or 0.0) < criteria["min_weekly_roc"]:
        return "weekly_roc"
    return None


def _sort_key(sort_by: str) -> Callable[[OptionRow], tuple[float, ...]]:
    def key(row: OptionRow) -> tuple[float, ...]:
        roc = -(row.weekly_roc or 0.0)
        primary = {
            "weekly_roc": roc,
            "annualized_roc": -(row.annualized_roc or 0.0),
            "open_interest": -float(row.open_interest or 0),
            "delta": abs(row.delta or 0.0),
            "spread": row.spread_pct if row.spread_pct is not None else math.inf,
        }[sort_by]
        return primary, roc, float(row.expiration.toordinal()), row.strike

    return key


@tool
async def filter_options(
    ctx: RunContext[ToolDeps],
    symbol: str,
    option_type: OptionType = "put",
    dte_min: Annotated[int, Field(ge=0, le=730)] = 14,
    dte_max: Annotated[int, Field(ge=0, le=730)] = 45,
    delta_min: Annotated[float, Field(ge=0, le=1)] = 0.15,
    delta_max: Annotated[float, Field(ge=0, le=1)] = 0.30,
    min_weekly_roc: Annotated[float, Field(ge=0)] = 0.0,
    min_open_interest: Annotated[int, Field(ge=0)] = 0,
    max_spread_pct: Annotated[float, Field(gt=0)] | None = None,
    sort_by: SortKey = "weekly_roc",
    limit: Annotated[int, Field(ge=1, le=25)] = 10,
) -> FilteredOptions:
    """Option contracts of a symbol meeting delta, DTE, return and liquidity criteria, ranked.

    Reads the chain itself and returns the matching contracts ranked (capped at limit),
    with how many contracts each criterion rejected. Delta bounds apply to |delta| (put
    delta is negative: delta_min 0.15 and delta_max 0.30 select puts with delta between
    -0.30 and -0.15). Returns are the seller's, in percent.

    Args:
        symbol: Underlying ticker, e.g. "MSFT".
        option_type: put or call.
        dte_min: Fewest calendar days to expiration.
        dte_max: Most calendar days to expiration.
        delta_min: Smallest |delta| accepted, e.g. 0.15.
        delta_max: Largest |delta| accepted, e.g. 0.30.
        min_weekly_roc: Smallest weekly return on capital, percent (0.5 = 0.5 % a week).
        min_open_interest: Fewest open contracts.
        max_spread_pct: Widest bid-ask spread, percent of the mid; no limit when omitted.
        sort_by: weekly_roc, annualized_roc or open_interest (highest first), delta
            (smallest |delta| first) or spread (tightest first).
        limit: Most contracts returned.
    """
    if delta_min > delta_max:
        raise ModelRetry(f"delta_min ({delta_min}) must not exceed delta_max ({delta_max})")
    criteria: dict[str, Any] = {
        "option_type": option_type,
        "dte_min": dte_min,
        "dte_max": dte_max,
        "delta_min": delta_min,
        "delta_max": delta_max,
        "min_weekly_roc": min_weekly_roc,
        "min_open_interest": min_open_interest,
        "max_spread_pct": max_spread_pct,
        "sort_by": sort_by,
    }
    chain, reason = await chain_for(ctx, symbol, dte_min, dte_max)
    if chain is None:
        return absent(FilteredOptions, ctx, symbol, reason, criteria=criteria)
    rows = [option_row(c, chain) for c in chain.contracts if c.option_type == option_type]
    failures = Counter(f for f in (_failure(r, criteria) for r in rows) if f is not None)
    matched = sorted((r for r in rows if _failure(r, criteria) is None), key=_sort_key(sort_by))
    notes = []
    if not matched and rows:
        worst = failures.most_common(1)[0][0]
        notes.append(f"no contract met every criterion; '{worst}' rejected the most")
    return FilteredOptions(
        symbol=chain.symbol,
        as_of=ctx.as_of,
        source=source_of(chain.provenance),
        missing=list(chain.provenance.missing),
        available=True,
        underlying_price=round_to(chain.underlying_price, 4),
        criteria=criteria,
        scanned=len(rows),
        matched=len(matched),
        rejected_by=dict(failures),
        contracts=matched[:limit],
        notes=notes,
    )

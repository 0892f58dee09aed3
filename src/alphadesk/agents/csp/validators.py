"""Output validators that tie each analyst's words to the facts.

A violation raises ModelRetry with what is wrong and what the facts are, so the model (or
policy) gets one more try; it never passes silently.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from alphadesk.agent import ModelRetry, RunContext
from alphadesk.agents.csp.deps import CspDeps
from alphadesk.agents.csp.models import (
    ChartAnalysis,
    CspConstraints,
    OptionsAnalysis,
    ResearchAnalysis,
)
from alphadesk.data.errors import DataError
from alphadesk.data.models import OptionContract

__all__ = ["chart_matches_prices", "options_exist_in_chain", "research_respects_earnings"]

# How far back a level may come from: the longest period the chart tools analyse.
_LOOKBACK = timedelta(days=2 * 366)
_PRICE_TOLERANCE = 0.01
_ROUNDING = 0.001


async def chart_matches_prices(ctx: RunContext[CspDeps], out: ChartAnalysis) -> ChartAnalysis:
    """The current price is the last close; levels lie in the traded range, supports below
    the price and resistances above it."""
    deps = ctx.deps
    start = (ctx.as_of - _LOOKBACK).date()
    bars = await asyncio.to_thread(deps.market.daily_bars, deps.symbol, ctx.as_of, start=start)
    closes = bars.prices()  # the adjusted close when a source has nothing else
    low = bars.frame["low"].min() if "low" in bars.fields else closes.min()
    high = bars.frame["high"].max() if "high" in bars.fields else closes.max()
    last = float(closes.iloc[-1])
    low, high = low * (1 - _ROUNDING), high * (1 + _ROUNDING)  # levels are quoted rounded
    problems = []
    if abs(out.current_price - last) > _PRICE_TOLERANCE * last:
        problems.append(f"current_price {out.current_price} is not the last close {last:.2f}")
    for level in out.support_levels:
        if not low <= level.price <= high:
            problems.append(
                f"support {level.price} lies outside the traded range {low:.2f}-{high:.2f}"
            )
        elif level.price >= last:
            problems.append(f"support {level.price} is not below the current price {last:.2f}")
    for level in out.resistance_levels:
        if not low <= level.price <= high:
            problems.append(
                f"resistance {level.price} lies outside the traded range {low:.2f}-{high:.2f}"
            )
        elif level.price <= last:
            problems.append(f"resistance {level.price} is not above the current price {last:.2f}")
    if problems:
        raise ModelRetry("The chart analysis contradicts the price data: " + "; ".join(problems))
    return out


async def options_exist_in_chain(ctx: RunContext[CspDeps], out: OptionsAnalysis) -> OptionsAnalysis:
    """A selected put exists in the chain with the stated numbers, inside the constraints."""
    if out.recommendation == "reject":
        return out
    if (
        out.best_strike is None
        or out.best_expiration is None
        or out.dte is None
        or out.premium is None
    ):
        raise ModelRetry("a selection needs best_strike, best_expiration, dte and premium")
    deps, rules = ctx.deps, ctx.deps.constraints
    chain = await asyncio.to_thread(
        deps.market.option_chain,
        deps.symbol,
        ctx.as_of,
        min_dte=0,
        max_dte=max(rules.dte_max, out.dte) + 7,
    )
    puts = {(c.expiration, c.strike): c for c in chain.select("put")}
    contract = puts.get((out.best_expiration, out.best_strike))
    if contract is None:
        listed = sorted({s for (e, s) in puts if e == out.best_expiration})
        where = (
            f"listed strikes for {out.best_expiration}: {_nearest(listed, out.best_strike)}"
            if listed
            else f"expirations in the chain: {[d.isoformat() for d in chain.expirations[:8]]}"
        )
        raise ModelRetry(f"no {out.best_expiration} {out.best_strike:g} put in the chain; {where}")
    problems = _contract_problems(out, contract, rules)
    for alt in out.alternative_strikes:
        if (alt.expiration, alt.strike) not in puts:
            problems.append(f"alternative {alt.expiration} {alt.strike:g} put is not in the chain")
    if problems:
        raise ModelRetry(
            f"The {out.best_expiration} {out.best_strike:g} put: " + "; ".join(problems)
        )
    return out


async def research_respects_earnings(
    ctx: RunContext[CspDeps], out: ResearchAnalysis
) -> ResearchAnalysis:
    """Earnings inside the option's life cannot be "low" earnings risk."""
    if out.earnings_risk != "low":
        return out
    horizon_end = ctx.as_of + timedelta(days=ctx.deps.horizon_days)
    dates = [out.next_earnings] if out.next_earnings else []
    try:
        earnings = await asyncio.to_thread(ctx.deps.market.earnings, ctx.deps.symbol, ctx.as_of)
        dates += [e.time.date() for e in earnings.upcoming(ctx.as_of)]
    except DataError:
        pass  # no earnings calendar: only the analyst's own date can be checked
    inside = sorted(d for d in dates if ctx.as_of.date() <= d <= horizon_end.date())
    if inside:
        raise ModelRetry(
            f"earnings on {inside[0]} fall inside the {ctx.deps.horizon_days}-day horizon "
            f"(until {horizon_end.date()}): earnings risk cannot be low"
        )
    return out


def _contract_problems(
    out: OptionsAnalysis, contract: OptionContract, rules: CspConstraints
) -> list[str]:
    """Where the stated numbers disagree with the listed contract or the constraints."""
    assert out.dte is not None and out.premium is not None
    problems: list[str] = []
    if abs(out.dte - contract.dte) > 1:
        problems.append(f"dte is {contract.dte}, not {out.dte}")
    if not rules.dte_min <= contract.dte <= rules.dte_max:
        problems.append(f"dte {contract.dte} is outside {rules.dte_min}-{rules.dte_max}")
    if (
        contract.bid is not None
        and contract.ask is not None
        and not (contract.bid - 0.01 <= out.premium <= contract.ask + 0.01)
    ):
        problems.append(f"premium {out.premium} is outside bid {contract.bid} / ask {contract.ask}")
    if contract.delta is not None:
        if out.delta is not None and abs(out.delta - contract.delta) > 0.02:
            problems.append(f"delta is {contract.delta:.3f}, not {out.delta}")
        if not rules.delta_min - 0.02 <= abs(contract.delta) <= rules.delta_max + 0.02:
            problems.append(
                f"|delta| {abs(contract.delta):.3f} is outside {rules.delta_min}-{rules.delta_max}"
            )
    return problems


def _nearest(strikes: list[float], target: float, n: int = 6) -> list[float]:
    return sorted(sorted(strikes, key=lambda s: abs(s - target))[:n])

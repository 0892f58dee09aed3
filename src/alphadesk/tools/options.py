"""Options tools: the chain near the money, Greeks, IV versus HV, return on capital, filters.

The tools read the chain themselves (symbol and criteria in, facts out): a model never
passes option arrays around. Every number comes from the data layer or
:mod:`alphadesk.analytics`; outputs are small and say (``source.origin``) whether the chain
was observed or modeled. Units and signs are those of :mod:`.options_models`: IV and HV
are decimals, returns and spreads percent, put delta negative.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
from collections import Counter
from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import Annotated, Any, Literal, TypeVar

from pydantic import Field

from alphadesk.agent import ModelRetry, RunContext, Toolset, tool
from alphadesk.analytics.errors import AnalyticsError
from alphadesk.analytics.options import csp_return_on_capital, expected_move, short_put_pop
from alphadesk.analytics.volatility import historical_volatility, iv_rank
from alphadesk.data.base import MarketData
from alphadesk.data.calendar import local_date
from alphadesk.data.errors import DataError
from alphadesk.data.models import OptionChain
from alphadesk.data.rates import risk_free_rate
from alphadesk.tools.common import (
    adjusted_frame,
    load_daily_bars,
    round_price,
    source_of,
    try_market,
)
from alphadesk.tools.deps import ToolDeps
from alphadesk.tools.options_models import (
    ContractGreeks,
    ContractRef,
    ExpirationView,
    FilteredOptions,
    GreeksReport,
    IvHvReport,
    OptionChainView,
    OptionRow,
    OptionType,
    ReturnOnCapitalReport,
    atm_iv,
    greeks_row,
    nearest_expiration,
    option_row,
    round_to,
)

__all__ = [
    "OPTIONS_TOOLS",
    "calculate_iv_hv",
    "calculate_roc",
    "filter_options",
    "get_option_chain",
    "get_option_greeks",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")
_MAX_EXPIRATIONS_LISTED = 24
_MAX_GREEKS_CONTRACTS = 10
_IV_HISTORY_WEEKS = 52
_IV_HISTORY_MIN_POINTS = 20
_RANGE_METHODS = ("parkinson", "garman_klass", "rogers_satchell", "yang_zhang")
_RICH, _CHEAP = 1.2, 0.9  # the seed's thresholds for premium richness (IV over HV)
_OCC = re.compile(r"^(?P<root>[A-Z][A-Z0-9.]{0,5}?)\s*(?P<ymd>\d{6})(?P<cp>[CP])(?P<k>\d{8})$")

# -- data access ---------------------------------------------------------------------------


async def _chain(
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


# -- get_option_chain ----------------------------------------------------------------------


def _expiration_view(
    chain: OptionChain,
    expiration: date,
    kinds: tuple[str, ...],
    per_side: int,
    with_contracts: bool,
) -> ExpirationView:
    listed = chain.select(expiration=expiration)
    first = listed[0]
    atm = atm_iv(chain, listed)
    move = expected_move(chain.underlying_price, atm, first.dte).move if atm else None
    strikes = sorted({c.strike for c in listed})
    rows: list[OptionRow] = []
    if with_contracts:
        spot = chain.underlying_price
        keep = {
            *[k for k in strikes if k < spot][-per_side:],
            *[k for k in strikes if k >= spot][:per_side],
        }
        rows = [option_row(c, chain) for c in listed if c.strike in keep and c.option_type in kinds]
    return ExpirationView(
        expiration=expiration,
        dte=first.dte,
        trading_days=first.trading_days,
        strikes_listed=len(strikes),
        strike_low=strikes[0],
        strike_high=strikes[-1],
        atm_iv=round_to(atm, 4),
        expected_move=round_price(move),
        contracts=rows,
    )


@tool
async def get_option_chain(
    ctx: RunContext[ToolDeps],
    symbol: str,
    dte_min: Annotated[int, Field(ge=0, le=730)] = 7,
    dte_max: Annotated[int, Field(ge=0, le=730)] = 60,
    option_type: Literal["put", "call", "both"] = "both",
    strikes_per_side: Annotated[int, Field(ge=1, le=5)] = 3,
    max_expirations: Annotated[int, Field(ge=1, le=6)] = 4,
) -> OptionChainView:
    """Option chain of a symbol: expirations in a DTE window and the strikes near the money.

    Bounded: every expiration in the window (with its at-the-money IV and one-sigma
    expected move) and, for the nearest expirations, the contracts at the strikes closest
    to the underlying price. Each contract has bid, ask, mid, delta (negative for puts),
    gamma, theta, vega, iv, volume, open interest, spread % and the seller's weekly and
    annualised return on capital (percent). source.origin says whether the chain is
    observed or modeled. To find contracts further from the money by delta, use
    filter_options.

    Args:
        symbol: Underlying ticker, e.g. "MSFT".
        dte_min: Fewest calendar days to expiration.
        dte_max: Most calendar days to expiration.
        option_type: put, call or both.
        strikes_per_side: Strikes below, and at or above, the price to show per expiration.
        max_expirations: How many of the nearest expirations get their contracts listed.
    """
    chain, reason = await _chain(ctx, symbol, dte_min, dte_max)
    if chain is None:
        return OptionChainView(
            symbol=symbol.upper(),
            as_of=ctx.as_of,
            missing=[str(reason)],
            available=False,
            option_type=option_type,
        )
    kinds = ("put", "call") if option_type == "both" else (option_type,)
    views = [
        _expiration_view(chain, expiration, kinds, strikes_per_side, i < max_expirations)
        for i, expiration in enumerate(chain.expirations[:_MAX_EXPIRATIONS_LISTED])
    ]
    notes = list(chain.provenance.notes[:2])
    if len(chain.expirations) > _MAX_EXPIRATIONS_LISTED:
        notes.append(
            f"{len(chain.expirations) - _MAX_EXPIRATIONS_LISTED} later expirations "
            "not shown; narrow the DTE window"
        )
    return OptionChainView(
        symbol=chain.symbol,
        as_of=ctx.as_of,
        source=source_of(chain.provenance),
        missing=list(chain.provenance.missing),
        available=True,
        underlying_price=round_to(chain.underlying_price, 4),
        rate=round(chain.rate, 5),
        option_type=option_type,
        expirations=views,
        notes=notes,
    )


# -- get_option_greeks ---------------------------------------------------------------------


def _parse_occ(symbol: str) -> ContractRef:
    match = _OCC.match(symbol.strip().upper())
    if match is None:
        raise ModelRetry(
            f"{symbol!r} is not an OCC option symbol (root, YYMMDD, C or P, strike x 1000 in "
            "8 digits, e.g. MSFT120720P00029000); or name it in contracts by "
            "expiration, strike and type"
        )
    ymd = match["ymd"]
    return ContractRef(
        expiration=date(2000 + int(ymd[:2]), int(ymd[2:4]), int(ymd[4:])),
        strike=int(match["k"]) / 1000.0,
        type="call" if match["cp"] == "C" else "put",
    )


def _hint(chain: OptionChain, ref: ContractRef) -> str:
    listed = sorted({c.strike for c in chain.select(ref.type, ref.expiration)})
    name = f"{ref.expiration} {ref.strike:g} {ref.type}"
    if not listed:
        dates = ", ".join(d.isoformat() for d in chain.expirations[:8])
        return f"{name}: no such expiration; listed: {dates}"
    nearest = sorted(sorted(listed, key=lambda k: abs(k - ref.strike))[:5])
    return f"{name}: strike not listed; nearest: {', '.join(f'{k:g}' for k in nearest)}"


@tool
async def get_option_greeks(
    ctx: RunContext[ToolDeps],
    symbol: str,
    contract_symbols: list[str] | None = None,
    contracts: list[ContractRef] | None = None,
) -> GreeksReport:
    """Greeks, IV and quotes of specific option contracts.

    Name contracts by OCC symbol (as listed by get_option_chain) or by expiration, strike
    and type. Returns delta (negative for puts), gamma, theta per day, vega per volatility
    point, rho, iv, bid/ask/mid and the seller's returns. Contracts that are not listed
    come back in not_found with the nearest listed strikes.

    Args:
        symbol: Underlying ticker, e.g. "MSFT".
        contract_symbols: OCC symbols, e.g. ["MSFT120720P00029000"] (at most 10 in all).
        contracts: Contracts by terms, e.g. [{"expiration": "2012-07-20", "strike": 29,
            "type": "put"}].
    """
    refs = [_parse_occ(s) for s in contract_symbols or []] + list(contracts or [])
    if not refs:
        raise ModelRetry("name at least one contract in contract_symbols or contracts")
    if len(refs) > _MAX_GREEKS_CONTRACTS:
        raise ModelRetry(f"ask for at most {_MAX_GREEKS_CONTRACTS} contracts per call")
    today = local_date(ctx.as_of)
    if any(r.expiration < today for r in refs):
        raise ModelRetry(f"an expiration is before the as-of date {today}: already expired")
    horizon = max((r.expiration - today).days for r in refs)
    chain, reason = await _chain(ctx, symbol, 0, horizon)
    if chain is None:
        return GreeksReport(
            symbol=symbol.upper(), as_of=ctx.as_of, missing=[str(reason)], available=False
        )
    index = {(c.expiration, c.strike, c.option_type): c for c in chain.contracts}
    found: list[ContractGreeks] = []
    not_found: list[str] = []
    for ref in refs:
        contract = index.get((ref.expiration, ref.strike, ref.type))
        if contract is None:
            not_found.append(_hint(chain, ref))
        else:
            found.append(greeks_row(contract, chain))
    if not found:
        raise ModelRetry("none of the contracts is listed: " + "; ".join(not_found))
    return GreeksReport(
        symbol=chain.symbol,
        as_of=ctx.as_of,
        source=source_of(chain.provenance),
        missing=list(chain.provenance.missing),
        available=True,
        underlying_price=round_to(chain.underlying_price, 4),
        rate=round(chain.rate, 5),
        contracts=found,
        not_found=not_found,
    )


# -- calculate_iv_hv -----------------------------------------------------------------------


def _hv_values(frame: Any, window: int) -> tuple[dict[str, float | None], list[str]]:
    """Every estimator the bars allow, by name; and what could not be computed."""
    values: dict[str, float | None] = {}
    missing: list[str] = []
    try:
        values["hv"] = historical_volatility(frame["close"], window).value
        values["hv_1y"] = historical_volatility(frame["close"], min(252, len(frame) - 1)).value
    except AnalyticsError as exc:
        missing.append(f"historical volatility: {exc}")
    for method in _RANGE_METHODS:
        try:
            values[f"hv_{method}"] = historical_volatility(frame, window, method).value  # type: ignore[arg-type]
        except AnalyticsError as exc:
            missing.append(f"hv_{method}: {exc}")
    return {k: round_to(v, 4) for k, v in values.items()}, missing


def _iv_history(
    market: MarketData,
    symbol: str,
    as_of: datetime,
    window: tuple[int, int],
    target: int,
    provider: str,
) -> list[float]:
    """Weekly ATM IV samples over the past year from the same provider as today's chain.

    Stops at the first week the provider cannot serve (a live source has no past chains),
    so a history never mixes observed and modeled values.
    """
    samples: list[float] = []
    for week in range(1, _IV_HISTORY_WEEKS + 1):
        when = as_of - timedelta(weeks=week)
        try:
            chain = market.option_chain(symbol, when, min_dte=window[0], max_dte=window[1])
        except DataError:
            break
        if chain.provenance.provider != provider:
            break
        expiration = nearest_expiration(chain, target)
        iv = atm_iv(chain, chain.select(expiration=expiration))
        if iv is not None:
            samples.append(iv)
    return samples


def _rank(iv: float, history: list[float], provider: str, missing: list[str]) -> dict[str, Any]:
    """IV rank and percentile over the history (with today), or why there are none."""
    if len(history) < _IV_HISTORY_MIN_POINTS:
        missing.append(
            f"iv_rank: {len(history)} weekly IV samples from {provider} in the "
            f"past year; at least {_IV_HISTORY_MIN_POINTS} are needed"
        )
        return {}
    try:
        rank = iv_rank([*history, iv], iv)
    except AnalyticsError as exc:
        missing.append(f"iv_rank: {exc}")
        return {}
    return {
        "iv_rank": round(rank.rank, 1),
        "iv_percentile": round(rank.percentile, 1),
        "iv_history_points": rank.observations,
    }


def _assessment(ratio: float | None) -> Literal["rich", "fair", "cheap"] | None:
    if ratio is None:
        return None
    return "rich" if ratio > _RICH else "cheap" if ratio < _CHEAP else "fair"


@tool
async def calculate_iv_hv(
    ctx: RunContext[ToolDeps],
    symbol: str,
    hv_window: Annotated[int, Field(ge=5, le=252)] = 20,
    target_dte: Annotated[int, Field(ge=7, le=180)] = 30,
) -> IvHvReport:
    """Implied versus historical volatility of a symbol, with IV rank when history allows.

    IV is that of the near-the-money options of the expiration nearest target_dte. HV is
    close-to-close (the basis of iv_hv_ratio) plus the Parkinson, Garman-Klass,
    Rogers-Satchell and Yang-Zhang estimators when the bars have a range, and a one-year
    HV. iv_hv_ratio > 1.2 reads as rich premiums, < 0.9 as cheap. IV rank and percentile
    come from weekly IV samples over the past year when the provider has them. All
    volatilities are annualised decimals.

    Args:
        symbol: Underlying ticker, e.g. "MSFT".
        hv_window: Trading days per historical-volatility estimate.
        target_dte: Days to expiration of the options whose IV is measured.
    """
    report: dict[str, Any] = {"symbol": symbol.upper(), "as_of": ctx.as_of, "hv_window": hv_window}
    missing: list[str] = []
    notes: list[str] = []
    try:
        bars = await load_daily_bars(ctx, symbol, "2y")
    except DataError as exc:
        missing.append(f"daily bars: {exc}")
    else:
        hv, missing = _hv_values(adjusted_frame(bars), hv_window)
        source = source_of(bars.provenance)
        report |= {**hv, "symbol": bars.symbol, "source": source, "hv_source": source}
        if {"close", "adj_close"} <= bars.fields:
            notes.append("HV from split- and dividend-adjusted prices")
    window = (max(1, target_dte - 14), target_dte + 21)
    chain, reason = await _chain(ctx, symbol, *window)
    if chain is None:
        return IvHvReport(**report, missing=[*missing, str(reason)], notes=notes)
    expiration = nearest_expiration(chain, target_dte)
    iv = atm_iv(chain, chain.select(expiration=expiration))
    ratio = iv / report["hv"] if iv is not None and report.get("hv") else None
    report |= {
        "iv": round_to(iv, 4),
        "iv_expiration": expiration,
        "iv_dte": (expiration - local_date(ctx.as_of)).days,
        "iv_hv_ratio": round_to(ratio, 3),
        "assessment": _assessment(ratio),
        "source": source_of(chain.provenance),
    }
    if chain.provenance.origin == "modeled":
        notes.append(
            "IV is modeled from realised volatility, so iv_hv_ratio reflects the "
            "model's assumptions, not market pricing"
        )
    if iv is None:
        missing.append(f"iv: the {expiration} options have no implied volatility near the money")
    else:
        history = await asyncio.to_thread(
            _iv_history,
            ctx.deps.market,
            symbol,
            ctx.as_of,
            window,
            target_dte,
            chain.provenance.provider,
        )
        report |= _rank(iv, history, chain.provenance.provider, missing)
    return IvHvReport(**report, missing=missing, notes=notes)


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
    chain, reason = await _chain(ctx, symbol, dte_min, dte_max)
    if chain is None:
        return FilteredOptions(
            symbol=symbol.upper(),
            as_of=ctx.as_of,
            missing=[str(reason)],
            available=False,
            criteria=criteria,
        )
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


OPTIONS_TOOLS = Toolset.of(
    "options",
    [get_option_chain, get_option_greeks, calculate_iv_hv, calculate_roc, filter_options],
)

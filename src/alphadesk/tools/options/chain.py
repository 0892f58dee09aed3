"""The options tools that read a listed chain: the chain near the money, the Greeks of
named contracts, and implied versus historical volatility with the IV rank."""

from __future__ import annotations

import asyncio
import re
from datetime import date, datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from alphadesk.agent import ModelRetry, RunContext, tool
from alphadesk.analytics.errors import AnalyticsError
from alphadesk.analytics.options import expected_move
from alphadesk.analytics.volatility import historical_volatility, iv_rank
from alphadesk.data.base import IvHistorySource, MarketData
from alphadesk.data.calendar import local_date
from alphadesk.data.chain import ProviderChain
from alphadesk.data.errors import DataError
from alphadesk.data.models import OptionChain
from alphadesk.tools.common import (
    absent,
    adjusted_frame,
    load_daily_bars,
    round_price,
    source_of,
)
from alphadesk.tools.deps import ToolDeps
from alphadesk.tools.options.models import (
    ContractGreeks,
    ContractRef,
    ExpirationView,
    GreeksReport,
    IvHvReport,
    OptionChainView,
    OptionRow,
    atm_iv,
    greeks_row,
    nearest_expiration,
    option_row,
    round_to,
)
from alphadesk.tools.options.select import chain_for

__all__ = ["calculate_iv_hv", "get_option_chain", "get_option_greeks"]

_MAX_EXPIRATIONS_LISTED = 24
_MAX_GREEKS_CONTRACTS = 10
_IV_HISTORY_WEEKS = 52
_IV_HISTORY_MIN_POINTS = 20
_RANGE_METHODS = ("parkinson", "garman_klass", "rogers_satchell", "yang_zhang")
_RICH, _CHEAP = 1.2, 0.9  # the seed's thresholds for premium richness (IV over HV)
_OCC = re.compile(r"^(?P<root>[A-Z][A-Z0-9.]{0,5}?)\s*(?P<ymd>\d{6})(?P<cp>[CP])(?P<k>\d{8})$")

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
    chain, reason = await chain_for(ctx, symbol, dte_min, dte_max)
    if chain is None:
        return absent(OptionChainView, ctx, symbol, reason, option_type=option_type)
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
    chain, reason = await chain_for(ctx, symbol, 0, horizon)
    if chain is None:
        return absent(GreeksReport, ctx, symbol, reason)
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

    A provider that computes the history in one pass (the modeled chains) is asked
    directly; any other is walked chain by chain.
    """
    instants = [as_of - timedelta(weeks=week) for week in range(1, _IV_HISTORY_WEEKS + 1)]
    members = market.providers if isinstance(market, ProviderChain) else [market]
    source = next((p for p in members if p.name == provider), None)
    if isinstance(source, IvHistorySource):
        return source.atm_iv_history(
            symbol, instants, min_dte=window[0], max_dte=window[1], target_dte=target
        )
    return iv_history_by_chains(market, symbol, instants, window, target, provider)


def iv_history_by_chains(
    market: MarketData,
    symbol: str,
    instants: list[datetime],
    window: tuple[int, int],
    target: int,
    provider: str,
) -> list[float]:
    """The ATM IV of each instant's chain, read chain by chain (any provider).

    Stops at the first instant the provider cannot serve (a live source has no past
    chains), so a history never mixes observed and modeled values.
    """
    samples: list[float] = []
    for when in instants:
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
        source = source_of(bars.provenance, bars.basis)
        report |= {**hv, "symbol": bars.symbol, "source": source, "hv_source": source}
        if {"close", "adj_close"} <= bars.fields:
            notes.append("HV from split- and dividend-adjusted prices")
    window = (max(1, target_dte - 14), target_dte + 21)
    chain, reason = await chain_for(ctx, symbol, *window)
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

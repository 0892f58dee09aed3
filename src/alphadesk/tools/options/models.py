"""What the options tools return, and the arithmetic that turns a listed contract into it.

Conventions shared by every options output:

* ``iv`` and ``hv`` are annualised decimals (0.25 = 25 %).
* ``weekly_roc``, ``annualized_roc`` and ``spread_pct`` are percent (0.5 = 0.5 %).
* Put delta is negative (its true sign); delta bounds in criteria apply to ``|delta|``.
* theta is per calendar day, vega per volatility point, rho per rate point, per share.

When a source lacks a contract's IV it is implied from the mid; when it lacks the Greeks
they are computed (Black–Scholes–Merton) from that IV, and ``greeks_source`` says so.
"""

from __future__ import annotations

import math
from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from alphadesk.analytics.errors import AnalyticsError
from alphadesk.analytics.options import bs_greeks, csp_return_on_capital, implied_vol
from alphadesk.data.calendar import local_date, session_close
from alphadesk.data.models import OptionChain, OptionContract
from alphadesk.tools.common import Source, ToolOutput

__all__ = [
    "ContractGreeks",
    "ContractRef",
    "ExpirationView",
    "FilteredOptions",
    "GreeksReport",
    "IvHvReport",
    "OptionChainView",
    "OptionRow",
    "OptionType",
    "ReturnOnCapitalReport",
    "atm_iv",
    "greeks_row",
    "implied_iv",
    "nearest_expiration",
    "option_row",
    "round_to",
]

OptionType = Literal["put", "call"]
_YEAR_SECONDS = 365.0 * 86400.0


# -- output models -------------------------------------------------------------------------


class OptionRow(BaseModel):
    """One listed contract with its quote, Greeks and the seller's return."""

    model_config = ConfigDict(frozen=True)

    contract_symbol: str | None = Field(None, description="OCC symbol when the source has it.")
    type: OptionType
    expiration: date
    strike: float
    dte: int = Field(description="Calendar days from the as-of date to expiration.")
    bid: float | None
    ask: float | None
    mid: float | None = Field(description="(bid + ask) / 2: the premium used for returns.")
    delta: float | None = Field(description="Negative for puts.")
    gamma: float | None
    theta: float | None = Field(description="Per calendar day, per share.")
    vega: float | None = Field(description="Per volatility point, per share.")
    iv: float | None = Field(description="Implied volatility, annualised decimal.")
    volume: int | None
    open_interest: int | None
    spread_pct: float | None = Field(description="(ask - bid) / mid, percent.")
    weekly_roc: float | None = Field(
        description="Seller's return per week, percent: mid / capital * 7 / dte; the capital "
        "is the strike for a put (cash-secured), the underlying price for a call (covered)."
    )
    annualized_roc: float | None = Field(description="mid / capital * 365 / dte, percent.")


class ExpirationView(BaseModel):
    """One expiration of the window: what is listed, and the contracts near the money."""

    expiration: date
    dte: int
    trading_days: int = Field(description="Sessions left, the expiration day included.")
    strikes_listed: int
    strike_low: float
    strike_high: float
    atm_iv: float | None = Field(description="At-the-money IV, interpolated to the price.")
    expected_move: float | None = Field(description="One-sigma move to expiration, dollars.")
    contracts: list[OptionRow] = Field(description="Near the money; empty past the cap.")


class OptionChainView(ToolOutput):
    """The expirations of a DTE window and the strikes near the money of the nearest ones."""

    available: bool
    underlying_price: float | None = None
    rate: float | None = Field(None, description="Risk-free rate used, continuous decimal.")
    option_type: Literal["put", "call", "both"] = "both"
    expirations: list[ExpirationView] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class ContractRef(BaseModel):
    """A contract named by its terms."""

    model_config = ConfigDict(extra="forbid")

    expiration: date = Field(description="Expiration date, YYYY-MM-DD.")
    strike: float = Field(gt=0, description="Strike price.")
    type: OptionType = Field(description="put or call.")


class ContractGreeks(OptionRow):
    """A contract with every sensitivity and how its Greeks were obtained."""

    rho: float | None = Field(description="Per percentage point of rate, per share.")
    years_to_expiry: float = Field(description="Calendar years to the expiration's close.")
    in_the_money: bool
    greeks_source: Literal["provider", "computed"] = Field(
        description="provider: as the source gave them; computed: Black-Scholes from iv."
    )


class GreeksReport(ToolOutput):
    """Greeks of the requested contracts."""

    available: bool
    underlying_price: float | None = None
    rate: float | None = None
    contracts: list[ContractGreeks] = Field(default_factory=list)
    not_found: list[str] = Field(default_factory=list, description="With the nearest listed.")


class IvHvReport(ToolOutput):
    """Implied volatility near the money against historical volatility (``source`` is the
    option chain's, ``hv_source`` the bars')."""

    iv: float | None = Field(None, description="ATM implied volatility, annualised decimal.")
    iv_expiration: date | None = None
    iv_dte: int | None = None
    hv_window: int
    hv_source: Source | None = Field(None, description="Who served the bars behind the HV.")
    hv: float | None = Field(None, description="Close-to-close HV over hv_window: the basis.")
    hv_parkinson: float | None = None
    hv_garman_klass: float | None = None
    hv_rogers_satchell: float | None = None
    hv_yang_zhang: float | None = None
    hv_1y: float | None = Field(None, description="Close-to-close HV over up to 252 days.")
    iv_hv_ratio: float | None = Field(None, description="iv / hv.")
    assessment: Literal["rich", "fair", "cheap"] | None = Field(
        None, description="rich when iv/hv > 1.2, cheap below 0.9, else fair."
    )
    iv_rank: float | None = Field(None, description="Percent: (iv - low) / (high - low).")
    iv_percentile: float | None = Field(None, description="Percent of the history below iv.")
    iv_history_points: int = Field(0, description="Weekly IV samples behind the rank.")
    notes: list[str] = Field(default_factory=list)


class ReturnOnCapitalReport(BaseModel):
    """A cash-secured put's return on the capital it ties up."""

    symbol: str | None = None
    as_of: datetime
    premium: float
    strike: float
    dte: int
    roc: float = Field(description="premium / strike, percent, for the whole trade.")
    weekly_roc: float = Field(description="roc * 7 / dte, percent.")
    annualized_roc: float = Field(description="roc * 365 / dte (simple), percent.")
    annualized_compound_roc: float = Field(description="(1 + roc)^(365/dte) - 1, percent.")
    breakeven: float = Field(description="strike - premium.")
    capital_per_contract: float = Field(description="strike * 100.")
    premium_per_contract: float = Field(description="premium * 100.")
    probability_of_profit: float | None = Field(
        None, description="Risk-neutral chance the stock ends above breakeven, 0-1."
    )
    pop_inputs: dict[str, float] | None = Field(
        None, description="underlying_price, iv, rate and years used for the probability."
    )
    missing: list[str] = Field(default_factory=list)


class FilteredOptions(ToolOutput):
    """Contracts meeting the criteria, ranked, with why the others failed."""

    available: bool
    underlying_price: float | None = None
    criteria: dict[str, float | int | str | None] = Field(default_factory=dict)
    scanned: int = 0
    matched: int = 0
    rejected_by: dict[str, int] = Field(
        default_factory=dict, description="Contracts failing each criterion (first failure)."
    )
    contracts: list[OptionRow] = Field(default_factory=list, description="Best first, capped.")
    notes: list[str] = Field(default_factory=list)


# -- contract arithmetic -------------------------------------------------------------------


def _sig(value: float | None, digits: int = 4) -> float | None:
    """Round to significant digits (Greeks span many magnitudes); None stays None."""
    if value is None or not math.isfinite(value):
        return None
    return float(f"{value:.{digits}g}")


def round_to(value: float | None, places: int) -> float | None:
    """``round`` that lets None through and turns NaN or infinity into None."""
    if value is None or not math.isfinite(value):
        return None
    return round(value, places)


def _years(as_of: datetime, expiration: date, dte: int) -> float:
    """Time to the expiration session's close in years of 365 days (as the chain model)."""
    try:
        end = session_close(expiration)
    except ValueError:
        return max(dte, 0) / 365.0
    return max((end - as_of).total_seconds() / _YEAR_SECONDS, 0.0)


def _roc(premium: float | None, capital: float, dte: int) -> tuple[float | None, float | None]:
    if premium is None or capital <= 0:
        return None, None
    try:
        result = csp_return_on_capital(premium, capital, dte)
    except AnalyticsError:
        return None, None  # an expiring contract has no return to annualise
    return round_to(result.weekly * 100.0, 3), round_to(result.annualized * 100.0, 2)


def implied_iv(c: OptionContract, chain: OptionChain, t: float) -> float | None:
    """The source's IV, else the IV implied by the mid."""
    if c.iv is not None:
        return c.iv
    mid = c.mid
    if mid is None or mid <= 0 or t <= 0:
        return None
    value = float(
        implied_vol(
            mid,
            chain.underlying_price,
            c.strike,
            t,
            chain.rate,
            c.option_type == "call",
            chain.dividend_yield,
        )
    )
    return value if math.isfinite(value) else None


def _greeks(
    c: OptionContract, chain: OptionChain, t: float, iv: float | None
) -> tuple[dict[str, float | None], Literal["provider", "computed"]]:
    given = {"delta": c.delta, "gamma": c.gamma, "theta": c.theta, "vega": c.vega, "rho": c.rho}
    if c.delta is not None or iv is None or t <= 0:
        return given, "provider"
    g = bs_greeks(
        chain.underlying_price,
        c.strike,
        t,
        chain.rate,
        iv,
        c.option_type == "call",
        chain.dividend_yield,
    )
    return {
        "delta": float(g.delta),
        "gamma": float(g.gamma),
        "theta": float(g.theta),
        "vega": float(g.vega),
        "rho": float(g.rho),
    }, "computed"


def _row_fields(c: OptionContract, chain: OptionChain) -> dict[str, Any]:
    t = _years(chain.as_of, c.expiration, c.dte)
    iv = implied_iv(c, chain, t)
    greeks, how = _greeks(c, chain, t, iv)
    mid = c.mid
    quoted = mid is not None and mid > 0 and c.bid is not None and c.ask is not None
    spread = (c.ask - c.bid) / mid * 100.0 if quoted else None  # type: ignore[operator]
    capital = c.strike if c.option_type == "put" else chain.underlying_price
    weekly, annual = _roc(mid, capital, c.dte)
    return {
        "contract_symbol": c.contract_symbol,
        "type": c.option_type,
        "expiration": c.expiration,
        "strike": c.strike,
        "dte": c.dte,
        "bid": round_to(c.bid, 2),
        "ask": round_to(c.ask, 2),
        "mid": round_to(mid, 3),
        "delta": _sig(greeks["delta"]),
        "gamma": _sig(greeks["gamma"]),
        "theta": _sig(greeks["theta"]),
        "vega": _sig(greeks["vega"]),
        "iv": round_to(iv, 4),
        "volume": c.volume,
        "open_interest": c.open_interest,
        "spread_pct": round_to(spread, 2),
        "weekly_roc": weekly,
        "annualized_roc": annual,
        "rho": _sig(greeks["rho"]),
        "years_to_expiry": round(t, 6),
        "greeks_source": how,
        "in_the_money": c.in_the_money,
    }


def option_row(c: OptionContract, chain: OptionChain) -> OptionRow:
    """The tool view of one contract (IV and Greeks computed when the source lacks them)."""
    fields = _row_fields(c, chain)
    return OptionRow.model_validate({k: fields[k] for k in OptionRow.model_fields})


def atm_iv(chain: OptionChain, contracts: list[OptionContract]) -> float | None:
    """IV at the underlying price: the call/put mean per strike, linear between the two
    strikes that bracket the price."""
    per_strike: dict[float, list[float]] = {}
    for c in contracts:
        iv = implied_iv(c, chain, _years(chain.as_of, c.expiration, c.dte))
        if iv is not None:
            per_strike.setdefault(c.strike, []).append(iv)
    if not per_strike:
        return None
    spot = chain.underlying_price
    mean = {k: sum(v) / len(v) for k, v in per_strike.items()}
    below = max((k for k in mean if k <= spot), default=None)
    above = min((k for k in mean if k >= spot), default=None)
    if below is None or above is None or below == above:
        return mean[below if below is not None else above]  # type: ignore[index]
    weight = (spot - below) / (above - below)
    return mean[below] + weight * (mean[above] - mean[below])


def nearest_expiration(chain: OptionChain, target_dte: int) -> date:
    """The chain's expiration closest to ``target_dte`` days out (the earlier on a tie)."""
    today = local_date(chain.as_of)
    return min(chain.expirations, key=lambda d: (abs((d - today).days - target_dte), d))


def greeks_row(c: OptionContract, chain: OptionChain) -> ContractGreeks:
    fields = _row_fields(c, chain)
    return ContractGreeks.model_validate({k: fields[k] for k in ContractGreeks.model_fields})

"""Same-day (0DTE) short option trades: strikes, credit, risk and probability of profit.

Pure math over a spot price, an at-the-money volatility, the time left and a rate:

* **Time.** Options expiring at today's close: ``T`` is in years of *trading* time,
  ``minutes left in the session / (252 x 390)``; intraday variance accrues while the
  market trades, not overnight (:func:`session_years`).
* **Volatility.** ``σ(K) = σ_atm (1 − skew·z + smile·z²)`` in standardised moneyness
  ``z = ln(K/F) / (σ_atm √T)``, bounded to [0.5, 3] × σ_atm: the put skew and smile of the
  modeled chains, so an out-of-the-money put is priced richer than a call as far away.
* **Prices and Greeks.** Black–Scholes–Merton (:mod:`.options`).
* **Strikes.** On a grid of ``increment``: by delta (the listed strike whose |delta| is
  nearest the target) or by expected move (``multiple`` one-sigma moves away, rounded
  away from the money).
* **Risk.** Credit, break-evens (short strikes ∓ net credit) and the probability of
  profit, the risk-neutral probability that the underlying ends between the break-evens:
  ``N(d2(B_low)) − N(d2(B_high))``. Max loss: with wings (long options ``wing_width``
  further out) ``wing_width − credit``; a naked put loses at most ``strike − credit``
  (the underlying at zero); a naked call's loss is unlimited (``None``).

All amounts are per share of the underlying; a contract is 100 shares.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from .errors import InvalidInput
from .options import ExpectedMove, bs_greeks, bs_price, expected_move, short_put_pop

__all__ = [
    "SESSION_MINUTES",
    "TRADING_MINUTES_PER_YEAR",
    "Leg",
    "Selection",
    "Strategy",
    "VolSurface",
    "ZeroDteTrade",
    "build_zero_dte",
    "payoff",
    "session_years",
    "strike_by_delta",
    "strike_by_expected_move",
]

Strategy = Literal["strangle", "put_only", "call_only"]
Selection = Literal["delta", "expected_move"]
Right = Literal["put", "call"]

SESSION_MINUTES = 390
TRADING_MINUTES_PER_YEAR = 252 * SESSION_MINUTES
_MAX_SD = 8.0
_RIGHTS: dict[str, tuple[Right, ...]] = {
    "strangle": ("put", "call"),
    "put_only": ("put",),
    "call_only": ("call",),
}  # strikes searched up to this many one-sigma moves from the spot


def session_years(minutes_left: float) -> float:
    """Years of trading time in ``minutes_left`` of a session (252 sessions of 390 min)."""
    if not math.isfinite(minutes_left) or minutes_left <= 0:
        raise InvalidInput(
            f"minutes left must be positive, got {minutes_left}; a 0DTE option at or after "
            "the close has expired"
        )
    return minutes_left / TRADING_MINUTES_PER_YEAR


@dataclass(frozen=True, slots=True)
class VolSurface:
    """An at-the-money volatility with a put skew and a smile (decimals)."""

    atm_vol: float
    skew: float = 0.12
    smile: float = 0.03

    def __post_init__(self) -> None:
        if not (math.isfinite(self.atm_vol) and self.atm_vol > 0):
            raise InvalidInput(
                f"atm_vol must be a positive decimal (0.15 = 15 %), got {self.atm_vol}"
            )

    def sigma(self, spot: float, strike: float, T: float, r: float, q: float = 0.0) -> float:
        """The volatility of ``strike``."""
        forward = spot * math.exp((r - q) * T)
        z = math.log(strike / forward) / (self.atm_vol * math.sqrt(T))
        factor = 1.0 - self.skew * z + self.smile * z * z
        return self.atm_vol * min(max(factor, 0.5), 3.0)


@dataclass(frozen=True, slots=True)
class Leg:
    """One option of the trade, per share. ``side`` short means sold (premium received)."""

    right: Right
    side: Literal["short", "long"]
    strike: float
    sigma: float
    premium: float
    delta: float
    gamma: float
    theta: float
    prob_itm: float


@dataclass(frozen=True, slots=True)
class ZeroDteTrade:
    """A 0DTE premium-selling trade, per share of the underlying.

    Attributes:
        strategy: strangle, put_only or call_only.
        spot: Underlying price at entry.
        T: Time to expiry in years of trading time.
        atm_vol: At-the-money volatility.
        legs: Short legs first, then any long wings.
        credit: Net premium received.
        max_loss: Worst loss at expiry; None when unlimited (a naked call).
        breakeven_low: Put break-even (None without a put).
        breakeven_high: Call break-even (None without a call).
        pop: Probability the trade makes money at expiry (0-1).
        expected_move: The one-sigma move to the close.
    """

    strategy: Strategy
    spot: float
    T: float
    atm_vol: float
    legs: tuple[Leg, ...]
    credit: float
    max_loss: float | None
    breakeven_low: float | None
    breakeven_high: float | None
    pop: float
    expected_move: ExpectedMove


def _sigmas(
    spot: float, strikes: np.ndarray, T: float, r: float, surface: VolSurface, q: float
) -> np.ndarray:
    return np.array([surface.sigma(spot, float(k), T, r, q) for k in strikes])


def strike_by_delta(
    spot: float,
    right: Right,
    target_delta: float,
    T: float,
    r: float,
    surface: VolSurface,
    *,
    increment: float = 1.0,
    q: float = 0.0,
) -> float:
    """The out-of-the-money strike on the grid whose |delta| is nearest ``target_delta``
    (the one further out on a tie)."""
    if not 0 < target_delta < 0.5:
        raise InvalidInput(f"target_delta must be between 0 and 0.5, got {target_delta}")
    if increment <= 0:
        raise InvalidInput(f"increment must be positive, got {increment}")
    reach = _MAX_SD * surface.atm_vol * math.sqrt(T) * spot
    steps = max(int(reach / increment), 1)
    if right == "put":
        first = math.floor(spot / increment) * increment
        strikes = first - increment * np.arange(steps + 1)
    else:
        first = math.ceil(spot / increment) * increment
        strikes = first + increment * np.arange(steps + 1)
    strikes = strikes[strikes > 0]
    sigmas = _sigmas(spot, strikes, T, r, surface, q)
    deltas = np.abs(np.asarray(bs_greeks(spot, strikes, T, r, sigmas, right == "call", q).delta))
    distance = np.abs(deltas - target_delta)
    best = int(np.flatnonzero(distance <= distance.min() + 1e-12)[-1])
    return float(strikes[best])


def strike_by_expected_move(
    spot: float, right: Right, move: float, multiple: float = 1.0, *, increment: float = 1.0
) -> float:
    """The strike ``multiple`` expected moves from ``spot``, rounded away from the money."""
    if multiple <= 0 or increment <= 0:
        raise InvalidInput(f"multiple and increment must be positive, got {multiple}, {increment}")
    if right == "put":
        strike = math.floor((spot - multiple * move) / increment) * increment
    else:
        strike = math.ceil((spot + multiple * move) / increment) * increment
    if strike <= 0:
        raise InvalidInput(f"{multiple} expected moves below {spot} is not a positive strike")
    return float(strike)


def _leg(
    spot: float,
    strike: float,
    right: Right,
    side: Literal["short", "long"],
    T: float,
    r: float,
    surface: VolSurface,
    q: float,
) -> Leg:
    sigma = surface.sigma(spot, strike, T, r, q)
    call = right == "call"
    greeks = bs_greeks(spot, strike, T, r, sigma, call, q)
    above = float(short_put_pop(spot, strike, 0.0, T, r, sigma, q))  # P(S_T > strike)
    return Leg(
        right=right,
        side=side,
        strike=strike,
        sigma=sigma,
        premium=float(bs_price(spot, strike, T, r, sigma, call, q)),
        delta=float(greeks.delta),
        gamma=float(greeks.gamma),
        theta=float(greeks.theta),
        prob_itm=above if call else 1.0 - above,
    )


def _prob_above(
    spot: float, level: float, T: float, r: float, surface: VolSurface, q: float
) -> float:
    if level <= 0:
        return 1.0
    sigma = surface.sigma(spot, level, T, r, q)
    # short_put_pop with no premium is N(d2) at ``level``: the probability of ending above it.
    return float(short_put_pop(spot, level, 0.0, T, r, sigma, q))


def build_zero_dte(
    spot: float,
    T: float,
    r: float,
    surface: VolSurface,
    strategy: Strategy = "strangle",
    selection: Selection = "delta",
    *,
    target_delta: float = 0.10,
    move_multiple: float = 1.0,
    increment: float = 1.0,
    wing_width: float | None = None,
    q: float = 0.0,
) -> ZeroDteTrade:
    """Choose the strikes and price the trade; see the module docstring for the method.

    Raises:
        InvalidInput: Non-positive spot or time, a delta outside (0, 0.5), a wing width
            that is not a positive multiple of the grid, or a credit no larger than zero.
    """
    if not (math.isfinite(spot) and spot > 0) or not (math.isfinite(T) and T > 0):
        raise InvalidInput(f"spot and T must be positive, got spot={spot}, T={T}")
    if wing_width is not None and wing_width <= 0:
        raise InvalidInput(f"wing_width must be positive, got {wing_width}")
    move = expected_move(spot, surface.atm_vol, T * 252, trading_days=True)
    rights = _RIGHTS[strategy]
    shorts: list[Leg] = []
    for right in rights:
        if selection == "delta":
            strike = strike_by_delta(
                spot, right, target_delta, T, r, surface, increment=increment, q=q
            )
        else:
            strike = strike_by_expected_move(
                spot, right, move.move, move_multiple, increment=increment
            )
        shorts.append(_leg(spot, strike, right, "short", T, r, surface, q))
    wings = [
        _leg(
            spot,
            leg.strike - wing_width if leg.right == "put" else leg.strike + wing_width,
            leg.right,
            "long",
            T,
            r,
            surface,
            q,
        )
        for leg in shorts
        if wing_width is not None and (leg.right == "call" or leg.strike - wing_width > 0)
    ]
    credit = sum(leg.premium for leg in shorts) - sum(leg.premium for leg in wings)
    if credit <= 0:
        raise InvalidInput("the trade collects no premium; choose strikes closer to the money")
    put = next((leg for leg in shorts if leg.right == "put"), None)
    call = next((leg for leg in shorts if leg.right == "call"), None)
    low = put.strike - credit if put else None
    high = call.strike + credit if call else None
    pop = (_prob_above(spot, low, T, r, surface, q) if low is not None else 1.0) - (
        _prob_above(spot, high, T, r, surface, q) if high is not None else 0.0
    )
    return ZeroDteTrade(
        strategy=strategy,
        spot=spot,
        T=T,
        atm_vol=surface.atm_vol,
        legs=(*shorts, *wings),
        credit=credit,
        max_loss=_max_loss(put, call, credit, wing_width, len(wings) == len(shorts)),
        breakeven_low=low,
        breakeven_high=high,
        pop=min(max(pop, 0.0), 1.0),
        expected_move=move,
    )


def _max_loss(
    put: Leg | None, call: Leg | None, credit: float, wing_width: float | None, winged: bool
) -> float | None:
    if wing_width is not None and winged:
        return max(wing_width - credit, 0.0)
    if call is not None:
        return None  # a naked short call: unlimited
    assert put is not None
    return put.strike - credit


def payoff(trade: ZeroDteTrade, price: float) -> float:
    """Profit (positive) or loss per share at expiry with the underlying at ``price``."""
    total = trade.credit
    for leg in trade.legs:
        if leg.right == "call":
            intrinsic = max(price - leg.strike, 0.0)
        else:
            intrinsic = max(leg.strike - price, 0.0)
        total += intrinsic if leg.side == "long" else -intrinsic
    return total

"""Black–Scholes–Merton pricing, Greeks and implied volatility, and cash-secured-put math.

Conventions (the same as py_vollib's analytical Greeks):

* ``S`` spot, ``K`` strike, ``T`` time to expiry in years, ``r`` continuously compounded
  risk-free rate, ``q`` continuous dividend yield, ``sigma`` annualised volatility, all
  decimals (0.25 is 25 %).
* theta is per calendar day (the annual theta divided by 365), vega per one volatility
  point (divided by 100), rho per one percentage point of rate (divided by 100).

Every function broadcasts numpy arrays against each other and scalars; when every input
is a scalar the result is a plain ``float``. ``NaN`` inputs propagate to ``NaN`` outputs;
out-of-domain inputs (non-positive spot or strike, negative time or volatility) raise
:class:`~alphadesk.analytics.errors.InvalidInput`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtr

from .errors import InvalidInput

__all__ = [
    "ExpectedMove",
    "Greeks",
    "ReturnOnCapital",
    "breakeven",
    "bs_greeks",
    "bs_price",
    "csp_return_on_capital",
    "expected_move",
    "implied_vol",
    "short_put_pop",
]

FloatArray = NDArray[np.float64]
FloatOrArray = float | FloatArray

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
SIGMA_MAX = 10.0  # 1000 % a year: the top of the implied-volatility bracket
_SIGMA_MIN = 1e-9
_MAX_ITER = 100


@dataclass(frozen=True, slots=True)
class Greeks:
    """Black–Scholes–Merton sensitivities (floats for scalar inputs, else arrays).

    Attributes:
        delta: dV/dS.
        gamma: d²V/dS².
        theta: dV/dt per calendar day (negative for a long option that decays).
        vega: dV/dσ per one volatility point (0.01).
        rho: dV/dr per one percentage point of rate (0.01).
    """

    delta: FloatOrArray
    gamma: FloatOrArray
    theta: FloatOrArray
    vega: FloatOrArray
    rho: FloatOrArray


@dataclass(frozen=True, slots=True)
class _Inputs:
    S: FloatArray
    K: FloatArray
    T: FloatArray
    r: FloatArray
    sigma: FloatArray
    q: FloatArray
    call: NDArray[np.bool_]
    scalar: bool


def _as_bool(is_call: ArrayLike) -> NDArray[np.bool_]:
    flags = np.asarray(is_call)
    if flags.dtype == np.bool_:
        return flags
    if flags.dtype.kind in "iu" and np.isin(flags, (0, 1)).all():
        return flags.astype(np.bool_)
    raise InvalidInput(
        f"is_call must be True/False or an array of booleans, got {is_call!r}; "
        "use True for a call and False for a put"
    )


def _check_domain(S: FloatArray, K: FloatArray, T: FloatArray, sigma: FloatArray) -> None:
    # Comparisons with NaN are False, so NaN passes through to NaN outputs.
    if np.any(S <= 0):
        raise InvalidInput("spot price S must be positive")
    if np.any(K <= 0):
        raise InvalidInput("strike K must be positive")
    if np.any(T < 0):
        raise InvalidInput("time to expiry T (in years) must not be negative")
    if np.any(sigma < 0):
        raise InvalidInput("volatility sigma must not be negative (0.25 means 25 %)")


def _prepare(
    S: ArrayLike,
    K: ArrayLike,
    T: ArrayLike,
    r: ArrayLike,
    sigma: ArrayLike,
    is_call: ArrayLike,
    q: ArrayLike,
) -> _Inputs:
    numbers = [np.asarray(x, dtype=np.float64) for x in (S, K, T, r, sigma, q)]
    call = _as_bool(is_call)
    scalar = all(a.ndim == 0 for a in numbers) and call.ndim == 0
    try:
        *arrays, flags = np.broadcast_arrays(*numbers, call)
    except ValueError as exc:
        raise InvalidInput(f"option inputs have incompatible shapes: {exc}") from exc
    s, k, t, rate, vol, div = (np.atleast_1d(a) for a in arrays)
    _check_domain(s, k, t, vol)
    return _Inputs(s, k, t, rate, vol, div, np.atleast_1d(flags), scalar)


def _out(x: FloatArray, scalar: bool) -> FloatOrArray:
    return float(np.ravel(x)[0]) if scalar else np.asarray(x, dtype=np.float64)


def _norm_pdf(x: FloatArray) -> FloatArray:
    return np.asarray(_INV_SQRT_2PI * np.exp(-0.5 * x * x), dtype=np.float64)


def _d1_d2(
    S: FloatArray,
    K: FloatArray,
    T: FloatArray,
    r: FloatArray,
    sigma: FloatArray,
    q: FloatArray,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """d1, d2 and sigma·sqrt(T); at sigma·sqrt(T) = 0 the limits ±inf (0 at the forward)."""
    vol_sqrt_t = sigma * np.sqrt(T)
    log_fk = np.log(S / K)
    log_fk += (r - q) * T
    with np.errstate(divide="ignore", invalid="ignore"):
        d1 = (log_fk + 0.5 * vol_sqrt_t * vol_sqrt_t) / vol_sqrt_t
    degenerate = vol_sqrt_t == 0
    if degenerate.any():  # expiry or zero volatility: the sign of log(F/K) decides
        edge = log_fk[degenerate]
        d1[degenerate] = np.where(edge > 0, np.inf, np.where(edge < 0, -np.inf, edge * 0.0))
    return d1, d1 - vol_sqrt_t, vol_sqrt_t


def _price(v: _Inputs, sigma: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Price and raw (per unit of sigma) vega at ``sigma``."""
    d1, d2, _ = _d1_d2(v.S, v.K, v.T, v.r, sigma, v.q)
    sign = 2.0 * v.call - 1.0
    fwd_s = v.S * np.exp(-v.q * v.T)
    pv_k = v.K * np.exp(-v.r * v.T)
    price = sign * (fwd_s * ndtr(sign * d1) - pv_k * ndtr(sign * d2))
    vega = fwd_s * _norm_pdf(d1) * np.sqrt(v.T)
    return price, vega


def bs_price(
    S: ArrayLike,
    K: ArrayLike,
    T: ArrayLike,
    r: ArrayLike,
    sigma: ArrayLike,
    is_call: ArrayLike,
    q: ArrayLike = 0.0,
) -> FloatOrArray:
    """Black–Scholes–Merton price of a European option.

    Args:
        S: Spot price (> 0).
        K: Strike (> 0).
        T: Time to expiry in years (>= 0); at 0 the price is the intrinsic value.
        r: Continuously compounded risk-free rate, decimal.
        sigma: Annualised volatility, decimal (>= 0).
        is_call: True for a call, False for a put (or a boolean array).
        q: Continuous dividend yield, decimal.

    Returns:
        The option price, a float for scalar inputs, else an array of the broadcast shape.

    Raises:
        InvalidInput: Out-of-domain inputs or shapes that do not broadcast.
    """
    v = _prepare(S, K, T, r, sigma, is_call, q)
    price, _ = _price(v, v.sigma)
    return _out(price, v.scalar)


def bs_greeks(
    S: ArrayLike,
    K: ArrayLike,
    T: ArrayLike,
    r: ArrayLike,
    sigma: ArrayLike,
    is_call: ArrayLike,
    q: ArrayLike = 0.0,
) -> Greeks:
    """Analytical Black–Scholes–Merton Greeks.

    Args:
        S: Spot price (> 0).
        K: Strike (> 0).
        T: Time to expiry in years (>= 0).
        r: Continuously compounded risk-free rate, decimal.
        sigma: Annualised volatility, decimal (>= 0).
        is_call: True for a call, False for a put (or a boolean array).
        q: Continuous dividend yield, decimal.

    Returns:
        Greeks with theta per calendar day, vega per vol point and rho per rate point.
        Where sigma·sqrt(T) is 0 (expiry or zero volatility) the values are the limits:
        gamma and vega 0, delta a step (half at the forward).

    Raises:
        InvalidInput: Out-of-domain inputs or shapes that do not broadcast.
    """
    v = _prepare(S, K, T, r, sigma, is_call, q)
    d1, d2, vol_sqrt_t = _d1_d2(v.S, v.K, v.T, v.r, v.sigma, v.q)
    # sign = +1 for calls, -1 for puts: N(sign·d) is N(d) for a call and N(-d) for a put.
    sign = 2.0 * v.call - 1.0
    disc_q = np.exp(-v.q * v.T)
    fwd_s = v.S * disc_q
    pv_k = v.K * np.exp(-v.r * v.T)
    pdf = _norm_pdf(d1)
    sqrt_t = np.sqrt(v.T)
    n1 = ndtr(sign * d1)
    n2 = ndtr(sign * d2)
    s_pdf = fwd_s * pdf
    with np.errstate(divide="ignore", invalid="ignore"):
        gamma = s_pdf / (v.S * v.S * vol_sqrt_t)
        decay = s_pdf * v.sigma / (2.0 * sqrt_t)
    degenerate = vol_sqrt_t == 0
    if degenerate.any():  # the limits at expiry or zero volatility
        gamma[degenerate] = 0.0
        decay[degenerate] = 0.0
    pv_k_n2 = pv_k * n2
    theta = (sign * (v.q * fwd_s * n1 - v.r * pv_k_n2) - decay) / 365.0
    greeks = Greeks(
        delta=_out(sign * disc_q * n1, v.scalar),
        gamma=_out(gamma, v.scalar),
        theta=_out(theta, v.scalar),
        vega=_out(s_pdf * sqrt_t * 0.01, v.scalar),
        rho=_out(sign * pv_k_n2 * v.T * 0.01, v.scalar),
    )
    return greeks


def _no_arbitrage_bounds(v: _Inputs) -> tuple[FloatArray, FloatArray]:
    fwd_s = v.S * np.exp(-v.q * v.T)
    pv_k = v.K * np.exp(-v.r * v.T)
    lower = np.where(v.call, np.maximum(fwd_s - pv_k, 0.0), np.maximum(pv_k - fwd_s, 0.0))
    upper = np.where(v.call, fwd_s, pv_k)
    return lower, upper


def _initial_sigma(v: _Inputs, target: FloatArray, lower: FloatArray) -> FloatArray:
    """Manaster–Koehler inflection point, or Brenner–Subrahmanyam near the money."""
    log_fk = np.abs(np.log(v.S / v.K) + (v.r - v.q) * v.T)
    mk = np.sqrt(2.0 * log_fk / v.T)
    bs = np.sqrt(2.0 * np.pi / v.T) * (target - lower) / (v.S * np.exp(-v.q * v.T))
    return np.clip(np.maximum(mk, bs), 0.01, SIGMA_MAX / 2)


def _subset(v: _Inputs, idx: NDArray[np.intp]) -> _Inputs:
    return _Inputs(
        v.S[idx], v.K[idx], v.T[idx], v.r[idx], v.sigma[idx], v.q[idx], v.call[idx], False
    )


def _flatten(v: _Inputs, shape: tuple[int, ...]) -> _Inputs:
    def flat(a: FloatArray) -> FloatArray:
        return np.broadcast_to(a, shape).ravel()

    call = np.broadcast_to(v.call, shape).ravel()
    return _Inputs(
        flat(v.S), flat(v.K), flat(v.T), flat(v.r), flat(v.sigma), flat(v.q), call, False
    )


def _newton_bisect(v: _Inputs, target: FloatArray, sigma: FloatArray) -> FloatArray:
    """Safeguarded Newton on price(sigma) = target; every element is bracketed in [lo, hi]."""
    lo = np.full_like(target, _SIGMA_MIN)
    hi = np.full_like(target, SIGMA_MAX)
    active = np.arange(target.size)
    for _ in range(_MAX_ITER):
        sub = _subset(v, active)
        s = sigma[active]
        price, vega = _price(sub, s)
        f = price - target[active]
        hi[active] = np.where(f > 0, s, hi[active])
        lo[active] = np.where(f < 0, s, lo[active])
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = s - f / vega
        inside = np.isfinite(newton) & (newton > lo[active]) & (newton < hi[active])
        new = np.where(inside, newton, 0.5 * (lo[active] + hi[active]))
        price_tol = 1e-13 * (sub.S + sub.K)
        done = (
            (np.abs(f) <= price_tol)
            | (np.abs(new - s) <= 1e-12)
            | (hi[active] - lo[active] <= 1e-12)
        )
        sigma[active] = np.where(np.abs(f) <= price_tol, s, new)
        active = active[~done]
        if active.size == 0:
            break
    return sigma


def implied_vol(
    price: ArrayLike,
    S: ArrayLike,
    K: ArrayLike,
    T: ArrayLike,
    r: ArrayLike,
    is_call: ArrayLike,
    q: ArrayLike = 0.0,
) -> FloatOrArray:
    """Black–Scholes–Merton implied volatility, vectorised.

    A Newton iteration safeguarded by bisection: each element keeps a bracket
    ``[1e-9, 10]`` that always contains the root, and a Newton step that would leave it is
    replaced by the bracket's midpoint, so every solvable element converges.

    Args:
        price: Observed option price.
        S: Spot price (> 0).
        K: Strike (> 0).
        T: Time to expiry in years.
        r: Continuously compounded risk-free rate, decimal.
        is_call: True for a call, False for a put (or a boolean array).
        q: Continuous dividend yield, decimal.

    Returns:
        Annualised implied volatility (decimal). ``NaN`` where there is no solution: a price
        at or below the no-arbitrage lower bound (discounted intrinsic value), at or above
        the upper bound, needing a volatility above 1000 %, ``T <= 0``, or NaN inputs.

    Raises:
        InvalidInput: Out-of-domain inputs or shapes that do not broadcast.
    """
    target_arr = np.asarray(price, dtype=np.float64)
    v = _prepare(S, K, T, r, 0.0, is_call, q)
    try:
        shape = np.broadcast_shapes(target_arr.shape, v.S.shape)
    except ValueError as exc:
        raise InvalidInput(f"price does not broadcast with the option inputs: {exc}") from exc
    flat = _flatten(v, shape)
    target = np.broadcast_to(target_arr, shape).ravel().astype(np.float64)
    result = np.full(target.shape, np.nan)
    lower, upper = _no_arbitrage_bounds(flat)
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(target) & (flat.T > 0) & (target > lower) & (target < upper)
    idx = np.flatnonzero(ok)
    if idx.size:
        sub = _subset(flat, idx)
        reachable = _price(sub, np.full(idx.size, SIGMA_MAX))[0] >= target[idx]
        idx, sub = idx[reachable], _subset(sub, np.flatnonzero(reachable))
        guess = _initial_sigma(sub, target[idx], lower[idx])
        result[idx] = _newton_bisect(sub, target[idx], guess)
    return _out(result.reshape(shape), v.scalar and target_arr.ndim == 0)


def breakeven(strike: ArrayLike, premium: ArrayLike, is_call: ArrayLike) -> FloatOrArray:
    """Break-even underlying price at expiry of a single option (long or short).

    Args:
        strike: Strike price.
        premium: Premium per share.
        is_call: True for a call (strike + premium), False for a put (strike - premium).

    Returns:
        The break-even price.
    """
    k = np.asarray(strike, dtype=np.float64)
    p = np.asarray(premium, dtype=np.float64)
    if np.any(k <= 0) or np.any(p < 0):
        raise InvalidInput("strike must be positive and premium must not be negative")
    call = _as_bool(is_call)
    result = np.where(call, k + p, k - p)
    return _out(result, k.ndim == 0 and p.ndim == 0 and call.ndim == 0)


def short_put_pop(
    S: ArrayLike,
    K: ArrayLike,
    premium: ArrayLike,
    T: ArrayLike,
    r: ArrayLike,
    sigma: ArrayLike,
    q: ArrayLike = 0.0,
) -> FloatOrArray:
    """Risk-neutral probability that a short put is profitable at expiry.

    The put seller profits when the underlying ends above the break-even
    ``B = K - premium``; under Black–Scholes–Merton that probability is ``N(d2)`` evaluated
    at strike ``B``. A break-even at or below zero is profitable for certain (1.0).

    Args:
        S: Spot price (> 0).
        K: Strike (> 0).
        premium: Premium received per share (>= 0).
        T: Time to expiry in years (>= 0).
        r: Continuously compounded risk-free rate, decimal.
        sigma: Annualised volatility, decimal.
        q: Continuous dividend yield, decimal.

    Returns:
        Probability in [0, 1].
    """
    prem = np.asarray(premium, dtype=np.float64)
    if np.any(prem < 0):
        raise InvalidInput("premium must not be negative")
    be = np.asarray(K, dtype=np.float64) - prem
    safe_be = np.where(be > 0, be, 1.0)
    v = _prepare(S, safe_be, T, r, sigma, False, q)
    _, d2, _ = _d1_d2(v.S, v.K, v.T, v.r, v.sigma, v.q)
    pop = np.where(np.broadcast_to(be, d2.shape) > 0, ndtr(d2), 1.0)
    return _out(pop, v.scalar and prem.ndim == 0)


@dataclass(frozen=True, slots=True)
class ReturnOnCapital:
    """Return on the cash secured by a short put (all returns are decimals: 0.01 = 1 %).

    Attributes:
        premium: Premium received per share.
        strike: Strike; the capital secured per share.
        dte: Calendar days to expiry.
        roc: premium / strike, for the whole trade.
        weekly: roc scaled to 7 days (roc * 7 / dte).
        annualized: roc scaled to 365 days, simple (roc * 365 / dte).
        annualized_compound: (1 + roc) ** (365 / dte) - 1, if the trade were repeated.
    """

    premium: float
    strike: float
    dte: float
    roc: float
    weekly: float
    annualized: float
    annualized_compound: float


def csp_return_on_capital(premium: float, strike: float, dte: float) -> ReturnOnCapital:
    """Return on capital of a cash-secured put, per trade, weekly and annualised.

    Args:
        premium: Premium received per share (>= 0, below the strike).
        strike: Put strike, the cash secured per share (> 0).
        dte: Calendar days to expiry (> 0).

    Returns:
        The per-trade, weekly and annualised returns as decimals.

    Raises:
        InvalidInput: ``dte <= 0`` (an expired option has no return to annualise), a
            non-positive strike, or a premium that is negative or not below the strike.
    """
    if not math.isfinite(dte) or dte <= 0:
        raise InvalidInput(
            f"dte must be a positive number of calendar days, got {dte}; "
            "an option at or past expiry has no return to annualise"
        )
    if not math.isfinite(strike) or strike <= 0:
        raise InvalidInput(f"strike must be positive, got {strike}")
    if not math.isfinite(premium) or premium < 0 or premium >= strike:
        raise InvalidInput(f"premium must be in [0, strike), got {premium} for strike {strike}")
    roc = premium / strike
    return ReturnOnCapital(
        premium=float(premium),
        strike=float(strike),
        dte=float(dte),
        roc=roc,
        weekly=roc * 7.0 / dte,
        annualized=roc * 365.0 / dte,
        annualized_compound=math.expm1(math.log1p(roc) * 365.0 / dte),
    )


@dataclass(frozen=True, slots=True)
class ExpectedMove:
    """One-standard-deviation move implied by a volatility over a horizon.

    Attributes:
        price: Underlying price.
        iv: Annualised volatility used (decimal).
        days: Horizon in days.
        year_days: Days in a year for the horizon (365 calendar or 252 trading).
        move: price * iv * sqrt(days / year_days).
        lower: price - move.
        upper: price + move.
    """

    price: float
    iv: float
    days: float
    year_days: int
    move: float
    lower: float
    upper: float


def expected_move(
    price: float, iv: float, days: float, *, trading_days: bool = False
) -> ExpectedMove:
    """Expected (one-sigma) move of the underlying from an implied volatility.

    Args:
        price: Underlying price (> 0).
        iv: Annualised implied volatility, decimal (>= 0).
        days: Horizon: calendar days, or trading days when ``trading_days`` is True (>= 0).
        trading_days: Count ``days`` as trading days over a 252-day year instead of
            calendar days over 365.

    Returns:
        The move and the price band it spans.

    Raises:
        InvalidInput: Non-positive price, negative volatility or horizon.
    """
    if not (math.isfinite(price) and price > 0):
        raise InvalidInput(f"price must be positive, got {price}")
    if not (math.isfinite(iv) and iv >= 0):
        raise InvalidInput(f"iv must be a non-negative decimal (0.25 = 25 %), got {iv}")
    if not (math.isfinite(days) and days >= 0):
        raise InvalidInput(f"days must not be negative, got {days}")
    year_days = 252 if trading_days else 365
    move = price * iv * math.sqrt(days / year_days)
    return ExpectedMove(
        float(price), float(iv), float(days), year_days, move, price - move, price + move
    )

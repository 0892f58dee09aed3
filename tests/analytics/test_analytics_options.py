"""Black–Scholes–Merton pricing, Greeks and implied volatility against py_vollib."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from py_vollib.black_scholes_merton import black_scholes_merton as ref_price
from py_vollib.black_scholes_merton.greeks import analytical as ref
from py_vollib.black_scholes_merton.implied_volatility import (
    implied_volatility as ref_implied_vol,
)

from alphadesk.analytics.errors import InvalidInput
from alphadesk.analytics.options import (
    Greeks,
    breakeven,
    bs_greeks,
    bs_price,
    csp_return_on_capital,
    expected_move,
    implied_vol,
    short_put_pop,
)

GRID = list(
    itertools.product(
        [80.0, 100.0, 125.0],  # S
        [70.0, 95.0, 100.0, 110.0, 140.0],  # K
        [0.02, 0.25, 1.0, 2.5],  # T
        [0.0, 0.05],  # r
        [0.08, 0.3, 0.9],  # sigma
        [0.0, 0.02],  # q
        [True, False],  # is_call
    )
)


def _grid_arrays() -> tuple[np.ndarray, ...]:
    cols = list(zip(*GRID, strict=True))
    return tuple(np.array(c) for c in cols)


def test_prices_match_py_vollib_over_a_grid() -> None:
    S, K, T, r, sigma, q, call = _grid_arrays()
    ours = bs_price(S, K, T, r, sigma, call, q)
    theirs = np.array(
        [ref_price("c" if c else "p", s, k, t, rr, v, qq) for s, k, t, rr, v, qq, c in GRID]
    )
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name", ["delta", "gamma", "theta", "vega", "rho"])
def test_greeks_match_py_vollib_over_a_grid(name: str) -> None:
    S, K, T, r, sigma, q, call = _grid_arrays()
    ours = getattr(bs_greeks(S, K, T, r, sigma, call, q), name)
    fn = getattr(ref, name)
    theirs = np.array([fn("c" if c else "p", s, k, t, rr, v, qq) for s, k, t, rr, v, qq, c in GRID])
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def test_scalar_inputs_give_floats_and_arrays_broadcast() -> None:
    g = bs_greeks(100.0, 100.0, 0.5, 0.01, 0.2, True)
    assert isinstance(g, Greeks)
    assert all(isinstance(getattr(g, f), float) for f in ("delta", "gamma", "theta", "vega"))
    assert isinstance(bs_price(100.0, 100.0, 0.5, 0.01, 0.2, False), float)
    prices = bs_price(100.0, np.array([[90.0], [110.0]]), np.array([0.1, 0.5, 1.0]), 0.0, 0.2, True)
    assert isinstance(prices, np.ndarray)
    assert prices.shape == (2, 3)


def test_hull_textbook_example() -> None:
    # Hull, Options, Futures and Other Derivatives, example 15.6: S=42, K=40, r=10 %,
    # sigma=20 %, T=0.5 gives a call of 4.76 and a put of 0.81.
    assert bs_price(42, 40, 0.5, 0.1, 0.2, True) == pytest.approx(4.7594, abs=1e-4)
    assert bs_price(42, 40, 0.5, 0.1, 0.2, False) == pytest.approx(0.8086, abs=1e-4)


def test_at_expiry_price_is_intrinsic_and_greeks_are_limits() -> None:
    assert bs_price(105.0, 100.0, 0.0, 0.05, 0.3, True) == pytest.approx(5.0)
    assert bs_price(105.0, 100.0, 0.0, 0.05, 0.3, False) == 0.0
    g = bs_greeks(np.array([90.0, 110.0]), 100.0, 0.0, 0.05, 0.3, True)
    np.testing.assert_array_equal(g.delta, [0.0, 1.0])
    np.testing.assert_array_equal(g.gamma, [0.0, 0.0])
    np.testing.assert_array_equal(g.vega, [0.0, 0.0])


def test_nan_inputs_propagate() -> None:
    prices = bs_price(np.array([100.0, np.nan]), 100.0, 0.5, 0.0, 0.2, True)
    assert math.isfinite(prices[0]) and math.isnan(prices[1])
    g = bs_greeks(100.0, 100.0, 0.5, 0.0, np.array([0.2, np.nan]), False)
    assert math.isnan(g.delta[1]) and math.isnan(g.theta[1])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"S": -1.0}, "spot"),
        ({"K": 0.0}, "strike"),
        ({"T": -0.1}, "time"),
        ({"sigma": -0.2}, "volatility"),
        ({"is_call": "c"}, "is_call"),
    ],
)
def test_out_of_domain_inputs_raise_clear_errors(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {
        "S": 100.0,
        "K": 100.0,
        "T": 0.5,
        "r": 0.0,
        "sigma": 0.2,
        "is_call": True,
    }
    args.update(kwargs)
    with pytest.raises(InvalidInput, match=match):
        bs_price(**args)  # type: ignore[arg-type]


def test_implied_vol_round_trips_over_the_grid() -> None:
    S, K, T, r, sigma, q, call = _grid_arrays()
    prices = bs_price(S, K, T, r, sigma, call, q)
    vega = bs_greeks(S, K, T, r, sigma, call, q).vega
    recovered = implied_vol(prices, S, K, T, r, call, q)
    # Where a vol point moves the price by less than 1e-6 the inverse is ill-conditioned;
    # there only the price must round-trip.
    well_posed = vega > 1e-6
    assert well_posed.sum() > 0.8 * len(GRID)
    np.testing.assert_allclose(recovered[well_posed], sigma[well_posed], atol=1e-7)
    solved = np.isfinite(recovered)
    repriced = bs_price(
        S[solved], K[solved], T[solved], r[solved], recovered[solved], call[solved], q[solved]
    )
    np.testing.assert_allclose(repriced, prices[solved], atol=1e-9)


def test_implied_vol_matches_py_vollib() -> None:
    cases = [
        (100, 95, 0.1, 0.03, 0.01, True, 0.22),
        (100, 120, 1.0, 0.05, 0.0, False, 0.45),
        (50, 50, 0.5, 0.0, 0.0, True, 0.9),
        (250, 200, 0.05, 0.04, 0.015, False, 0.35),
    ]
    for s, k, t, r, q, call, vol in cases:
        price = bs_price(s, k, t, r, vol, call, q)
        ours = implied_vol(price, s, k, t, r, call, q)
        theirs = ref_implied_vol(price, s, k, t, r, q, "c" if call else "p")
        assert ours == pytest.approx(theirs, abs=1e-8)
        assert ours == pytest.approx(vol, abs=1e-8)


def test_implied_vol_is_nan_where_there_is_no_solution() -> None:
    # ITM call priced below discounted intrinsic, a put above the strike's present value,
    # an expired option, and a NaN price.
    out = implied_vol(
        np.array([1.0, 150.0, 5.0, np.nan]),
        100.0,
        np.array([80.0, 120.0, 95.0, 100.0]),
        np.array([0.5, 0.5, 0.0, 0.5]),
        0.02,
        np.array([True, False, True, True]),
    )
    assert np.isnan(out).all()
    assert isinstance(implied_vol(2.5, 100.0, 100.0, 0.25, 0.0, True), float)


def test_implied_vol_handles_extreme_but_valid_prices() -> None:
    high = bs_price(100.0, 100.0, 0.5, 0.0, 4.0, True)
    low = bs_price(100.0, 100.0, 0.5, 0.0, 0.01, False)
    assert implied_vol(high, 100.0, 100.0, 0.5, 0.0, True) == pytest.approx(4.0, abs=1e-8)
    assert implied_vol(low, 100.0, 100.0, 0.5, 0.0, False) == pytest.approx(0.01, abs=1e-8)


option_inputs = st.tuples(
    st.floats(10, 500),  # S
    st.floats(0.3, 3.0),  # K / S
    st.floats(1 / 365, 3.0),  # T
    st.floats(-0.01, 0.1),  # r
    st.floats(0.01, 2.0),  # sigma
    st.floats(0.0, 0.06),  # q
)


@settings(max_examples=60, deadline=None)
@given(option_inputs)
def test_greek_signs_and_bounds(inputs: tuple[float, ...]) -> None:
    s, moneyness, t, r, sigma, q = inputs
    k = s * moneyness
    call, put = bs_greeks(s, k, t, r, sigma, True, q), bs_greeks(s, k, t, r, sigma, False, q)
    disc_q = math.exp(-q * t)
    assert 0.0 <= call.delta <= disc_q + 1e-12
    assert -disc_q - 1e-12 <= put.delta <= 0.0
    assert call.delta - put.delta == pytest.approx(disc_q, abs=1e-9)
    assert call.gamma >= 0 and call.gamma == pytest.approx(put.gamma, rel=1e-9, abs=1e-15)
    assert call.vega >= 0 and call.vega == pytest.approx(put.vega, rel=1e-9, abs=1e-15)
    assert call.rho >= 0 >= put.rho


@settings(max_examples=60, deadline=None)
@given(option_inputs)
def test_put_call_parity_and_no_arbitrage_bounds(inputs: tuple[float, ...]) -> None:
    s, moneyness, t, r, sigma, q = inputs
    k = s * moneyness
    call, put = bs_price(s, k, t, r, sigma, True, q), bs_price(s, k, t, r, sigma, False, q)
    fwd_s, pv_k = s * math.exp(-q * t), k * math.exp(-r * t)
    assert call - put == pytest.approx(fwd_s - pv_k, abs=1e-9 * (s + k))
    assert max(fwd_s - pv_k, 0.0) - 1e-9 <= call <= fwd_s + 1e-9
    assert max(pv_k - fwd_s, 0.0) - 1e-9 <= put <= pv_k + 1e-9


def test_breakeven() -> None:
    assert breakeven(100.0, 2.5, False) == 97.5
    assert breakeven(100.0, 2.5, True) == 102.5
    np.testing.assert_array_equal(breakeven([100.0, 50.0], [1.0, 2.0], [False, True]), [99.0, 52.0])
    with pytest.raises(InvalidInput):
        breakeven(100.0, -1.0, False)


def test_short_put_pop_matches_the_strike_derivative_of_put_prices() -> None:
    # Independent route: dP/dK = exp(-rT) * P(S_T < K), so P(S_T > B) = 1 - exp(rT) dP/dK.
    s, k, premium, t, r, vol, q = 100.0, 95.0, 1.8, 45 / 365, 0.04, 0.28, 0.01
    be, h = k - premium, 1e-3
    dp_dk = ref_price("p", s, be + h, t, r, vol, q) - ref_price("p", s, be - h, t, r, vol, q)
    expected = 1.0 - math.exp(r * t) * dp_dk / (2 * h)
    assert short_put_pop(s, k, premium, t, r, vol, q) == pytest.approx(expected, abs=1e-6)
    assert short_put_pop(100.0, 5.0, 6.0, 0.1, 0.0, 0.3) == 1.0
    pops = short_put_pop(100.0, np.array([90.0, 100.0, 110.0]), 2.0, 0.1, 0.0, 0.3)
    assert np.all(np.diff(pops) < 0)  # higher strike, lower probability of profit


def test_csp_return_on_capital_matches_the_seed_formula() -> None:
    roc = csp_return_on_capital(premium=1.2, strike=60.0, dte=30)
    assert roc.roc == pytest.approx(0.02)
    assert roc.weekly == pytest.approx(0.02 * 7 / 30)
    assert roc.annualized == pytest.approx(0.02 * 365 / 30)
    assert roc.annualized_compound == pytest.approx(1.02 ** (365 / 30) - 1)


@pytest.mark.parametrize("dte", [0, -3, float("nan")])
def test_csp_return_on_capital_rejects_expired_options(dte: float) -> None:
    with pytest.raises(InvalidInput, match="dte"):
        csp_return_on_capital(premium=1.0, strike=50.0, dte=dte)


def test_csp_return_on_capital_rejects_bad_prices() -> None:
    with pytest.raises(InvalidInput, match="premium"):
        csp_return_on_capital(premium=60.0, strike=50.0, dte=10)
    with pytest.raises(InvalidInput, match="strike"):
        csp_return_on_capital(premium=1.0, strike=0.0, dte=10)


def test_expected_move() -> None:
    em = expected_move(200.0, 0.3, 365)
    assert em.move == pytest.approx(60.0)
    assert (em.lower, em.upper) == pytest.approx((140.0, 260.0))
    em = expected_move(100.0, 0.2, 63, trading_days=True)
    assert em.move == pytest.approx(100 * 0.2 * math.sqrt(63 / 252))
    with pytest.raises(InvalidInput):
        expected_move(100.0, -0.2, 10)

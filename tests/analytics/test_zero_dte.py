"""0DTE trades checked against py_vollib (prices, deltas) and a hand-computed lognormal."""

from __future__ import annotations

import math
import warnings

import pytest
from scipy.stats import norm

from alphadesk.analytics.errors import InvalidInput
from alphadesk.analytics.zero_dte import (
    VolSurface,
    build_zero_dte,
    payoff,
    session_years,
    strike_by_delta,
    strike_by_expected_move,
)

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from py_vollib.black_scholes_merton import black_scholes_merton as vollib_price
    from py_vollib.black_scholes_merton.greeks.analytical import delta as vollib_delta

SPOT, R = 250.71, 0.0238  # SPY near the close of 2018-12-31, a 2.4 % T-bill
SURFACE = VolSurface(atm_vol=0.2542)  # the VIX at 25.42
T = session_years(390)  # a whole session


def _hand_sigma(strike: float) -> float:
    z = math.log(strike / (SPOT * math.exp(R * T))) / (0.2542 * math.sqrt(T))
    return 0.2542 * min(max(1 - 0.12 * z + 0.03 * z * z, 0.5), 3.0)


def test_a_delta_strangle_prices_each_leg_as_py_vollib_does() -> None:
    trade = build_zero_dte(SPOT, T, R, SURFACE, "strangle", "delta", target_delta=0.10)
    assert [leg.right for leg in trade.legs] == ["put", "call"]
    for leg in trade.legs:
        flag = leg.right[0]
        assert leg.sigma == pytest.approx(_hand_sigma(leg.strike), rel=1e-12)
        assert leg.premium == pytest.approx(
            vollib_price(flag, SPOT, leg.strike, T, R, leg.sigma, 0.0), abs=1e-10
        )
        assert leg.delta == pytest.approx(
            vollib_delta(flag, SPOT, leg.strike, T, R, leg.sigma, 0.0), abs=1e-10
        )
    assert trade.credit == pytest.approx(sum(leg.premium for leg in trade.legs))
    # A put 10-delta strike sits further from the spot than the call's: the skew.
    put, call = trade.legs
    assert SPOT - put.strike > call.strike - SPOT > 0


def test_the_delta_strike_is_the_grid_strike_nearest_the_target() -> None:
    for right in ("put", "call"):
        chosen = strike_by_delta(SPOT, right, 0.16, T, R, SURFACE, increment=1.0)
        grid = [float(k) for k in range(200, 301)]
        flag = right[0]
        deltas = {
            k: abs(vollib_delta(flag, SPOT, k, T, R, _hand_sigma(k), 0.0))
            for k in grid
            if (k < SPOT if right == "put" else k > SPOT)
        }
        best = min(deltas, key=lambda k: abs(deltas[k] - 0.16))
        assert chosen == best


def test_expected_move_strikes_round_away_from_the_money() -> None:
    trade = build_zero_dte(SPOT, T, R, SURFACE, "strangle", "expected_move", move_multiple=1.0)
    move = SPOT * 0.2542 * math.sqrt(1 / 252)  # one session of trading time
    assert trade.expected_move.move == pytest.approx(move)
    put, call = trade.legs
    assert put.strike == math.floor(SPOT - move) and call.strike == math.ceil(SPOT + move)
    assert strike_by_expected_move(100.0, "put", 2.5, 2.0, increment=5.0) == 95.0


def test_probability_of_profit_matches_a_lognormal_by_hand() -> None:
    trade = build_zero_dte(SPOT, T, R, SURFACE, "strangle", "delta", target_delta=0.12)
    assert trade.breakeven_low is not None and trade.breakeven_high is not None

    def above(level: float) -> float:
        sigma = _hand_sigma(level)
        d2 = (math.log(SPOT / level) + (R - sigma**2 / 2) * T) / (sigma * math.sqrt(T))
        return float(norm.cdf(d2))

    assert trade.pop == pytest.approx(above(trade.breakeven_low) - above(trade.breakeven_high))
    assert payoff(trade, trade.breakeven_low) == pytest.approx(0.0, abs=1e-9)
    assert payoff(trade, trade.breakeven_high) == pytest.approx(0.0, abs=1e-9)
    assert payoff(trade, SPOT) == pytest.approx(trade.credit)
    assert trade.max_loss is None  # a naked short call


def test_wings_cap_the_loss_and_a_naked_put_loses_at_most_its_strike() -> None:
    condor = build_zero_dte(SPOT, T, R, SURFACE, "strangle", wing_width=5.0, target_delta=0.15)
    assert len(condor.legs) == 4 and condor.max_loss == pytest.approx(5.0 - condor.credit)
    assert payoff(condor, 1.0) == pytest.approx(-condor.max_loss)
    assert payoff(condor, 1_000.0) == pytest.approx(-condor.max_loss)
    put = build_zero_dte(SPOT, T, R, SURFACE, "put_only", target_delta=0.10)
    assert put.breakeven_high is None and put.breakeven_low is not None
    assert put.max_loss == pytest.approx(put.legs[0].strike - put.credit)
    low, sigma = put.breakeven_low, _hand_sigma(put.breakeven_low)
    d2 = (math.log(SPOT / low) + (R - sigma**2 / 2) * T) / (sigma * math.sqrt(T))
    assert put.pop == pytest.approx(norm.cdf(d2))


def test_out_of_domain_inputs_say_what_to_fix() -> None:
    with pytest.raises(InvalidInput, match="expired"):
        session_years(0)
    with pytest.raises(InvalidInput, match="target_delta"):
        build_zero_dte(SPOT, T, R, SURFACE, target_delta=0.7)
    with pytest.raises(InvalidInput, match="atm_vol"):
        VolSurface(atm_vol=0)

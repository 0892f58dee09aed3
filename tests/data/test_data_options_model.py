"""Modeled option chains: parity, monotone prices, Greeks, spreads, listing, determinism."""

from __future__ import annotations

import itertools
import math
from datetime import UTC, date, datetime

import numpy as np
import pandas as pd
import pytest
from datahelpers import fixed_clock
from py_vollib.black_scholes import black_scholes

from alphadesk.data import NoData, OptionChain
from alphadesk.data.calendar import session_close, sessions_between
from alphadesk.data.chain import ProviderChain
from alphadesk.data.options_model import ModeledOptions, _quotes, strike_step
from alphadesk.data.providers.bundled import BUNDLED_DIR, BundledProvider

AS_OF = datetime(2012, 6, 1, 18, 0, tzinfo=UTC)  # 14:00 New York, a Friday


@pytest.fixture(scope="module")
def modeled() -> ModeledOptions:
    return ModeledOptions(BundledProvider(), clock=fixed_clock())


@pytest.fixture(scope="module")
def chain(modeled: ModeledOptions) -> OptionChain:
    return modeled.option_chain("AAPL", AS_OF, max_dte=120)


def _years(chain: OptionChain, expiration: date) -> float:
    return (session_close(expiration) - chain.as_of).total_seconds() / (365 * 86400)


def test_chain_is_labelled_modeled_and_known_at_as_of(chain: OptionChain) -> None:
    assert chain.provenance.origin == "modeled"
    assert chain.provenance.provider == "modeled"
    assert chain.observed_at <= AS_OF
    assert chain.underlying_price == 577.73  # the close of 31 May 2012, the last before as_of
    assert any("realised vol" in note for note in chain.provenance.notes)


def test_put_call_parity_holds_on_mids(chain: OptionChain) -> None:
    checked = 0
    for expiration in chain.expirations:
        calls = {c.strike: c for c in chain.select("call", expiration)}
        t = _years(chain, expiration)
        for put in chain.select("put", expiration):
            call = calls[put.strike]
            assert call.mid is not None and put.mid is not None
            forward_gap = chain.underlying_price - put.strike * math.exp(-chain.rate * t)
            # bid and ask are rounded to the cent: each mid is within half a cent of theory
            assert call.mid - put.mid == pytest.approx(forward_gap, abs=0.0101)
            checked += 1
    assert checked > 200


def test_prices_are_monotone_in_strike(chain: OptionChain) -> None:
    for expiration in chain.expirations:
        calls = [c.mid for c in chain.select("call", expiration)]
        puts = [p.mid for p in chain.select("put", expiration)]
        assert all(a >= b - 0.01 for a, b in itertools.pairwise(calls))
        assert all(a <= b + 0.01 for a, b in itertools.pairwise(puts))
        assert calls[0] > calls[-1] and puts[0] < puts[-1]


def test_mids_match_an_independent_black_scholes(chain: OptionChain) -> None:
    for contract in chain.contracts[::37]:
        t = _years(chain, contract.expiration)
        flag = "c" if contract.option_type == "call" else "p"
        reference = black_scholes(
            flag, chain.underlying_price, contract.strike, t, chain.rate, contract.iv
        )
        assert contract.mid == pytest.approx(reference, abs=0.0051)


def test_greeks_have_the_right_signs(chain: OptionChain) -> None:
    for c in chain.contracts:
        assert c.gamma is not None and c.gamma >= 0
        assert c.vega is not None and c.vega >= 0
        assert c.delta is not None
        if c.option_type == "call":
            assert 0 <= c.delta <= 1
            assert c.theta is not None and c.theta <= 0
        else:
            assert -1 <= c.delta <= 0
    near = chain.select("put", chain.expirations[2])
    deltas = [p.delta for p in near]
    assert deltas == sorted(deltas, reverse=True)  # more negative as the strike rises


def test_put_skew_and_term_structure(chain: OptionChain) -> None:
    expiration = chain.expirations[3]
    puts = chain.select("put", expiration)
    spot = chain.underlying_price
    atm = min(puts, key=lambda p: abs(p.strike - spot))
    otm = min(puts, key=lambda p: abs(p.strike - 0.9 * spot))
    far_call = min(chain.select("call", expiration), key=lambda c: abs(c.strike - 1.1 * spot))
    assert otm.iv > atm.iv > far_call.iv * 0.95
    ivs = [
        min(chain.select("put", e), key=lambda p: abs(p.strike - spot)).iv
        for e in chain.expirations
    ]
    assert len(set(np.round(ivs, 6))) > 1  # the term structure is not flat


def test_spreads_widen_away_from_the_money(chain: OptionChain) -> None:
    spot = chain.underlying_price
    puts = [p for p in chain.select("put", chain.expirations[4]) if p.strike < spot and p.bid]
    relative = [(p.ask - p.bid) / p.mid for p in reversed(puts)]  # from the money outwards
    assert relative[-1] > 3 * relative[0]
    ranks = np.argsort(np.argsort(relative))
    assert np.corrcoef(ranks, np.arange(len(relative)))[0, 1] > 0.9


def test_spreads_widen_for_illiquid_strikes() -> None:
    theo = np.array([2.0, 2.0])
    z = np.array([0.5, 0.5])
    group = np.array([1, 1])
    bid, ask = _quotes(theo, z, np.array([5000, 50]), group)
    assert ask[1] - bid[1] > ask[0] - bid[0]


def test_open_interest_and_volume_fall_away_from_the_money(chain: OptionChain) -> None:
    spot = chain.underlying_price
    monthly = next(e for e in chain.expirations if e == date(2012, 6, 15))
    contracts = chain.select("put", monthly)
    near = [c.open_interest for c in contracts if abs(c.strike / spot - 1) < 0.03]
    far = [c.open_interest for c in contracts if abs(c.strike / spot - 1) > 0.15]
    assert np.mean(near) > 3 * max(np.mean(far), 1)
    near_volume = [c.volume for c in contracts if abs(c.strike / spot - 1) < 0.03]
    far_volume = [c.volume for c in contracts if abs(c.strike / spot - 1) > 0.15]
    assert np.mean(near_volume) > 3 * max(np.mean(far_volume), 1)


def test_expirations_are_trading_days_weeklies_and_monthlies(chain: OptionChain) -> None:
    sessions = set(sessions_between(date(2012, 6, 1), date(2012, 12, 31)))
    assert all(e in sessions for e in chain.expirations)
    assert date(2012, 6, 1) in chain.expirations  # expires today, after as_of: 0 DTE
    assert date(2012, 6, 15) in chain.expirations  # third Friday
    assert date(2012, 9, 21) in chain.expirations  # a monthly beyond the weeklies
    assert date(2012, 8, 31) not in chain.expirations  # weeklies stop after six weeks
    for c in chain.contracts:
        assert c.dte == (c.expiration - date(2012, 6, 1)).days
        assert c.trading_days >= 1


def test_a_holiday_friday_moves_the_expiration_to_thursday(modeled: ModeledOptions) -> None:
    chain = modeled.option_chain("IBM", datetime(2012, 3, 30, 21, tzinfo=UTC), max_dte=10)
    assert date(2012, 4, 5) in chain.expirations  # Good Friday 2012 was 6 April
    assert date(2012, 4, 6) not in chain.expirations


def test_no_weeklies_before_they_were_listed(modeled: ModeledOptions) -> None:
    chain = modeled.option_chain("IBM", datetime(2005, 3, 1, 21, tzinfo=UTC), max_dte=70)
    assert chain.expirations == [date(2005, 3, 18), date(2005, 4, 15)]


def test_strike_spacing_follows_the_price_band(chain: OptionChain) -> None:
    assert [strike_step(p) for p in (3, 20, 60, 300, 800, 2500)] == [0.5, 1, 2.5, 5, 10, 25]
    strikes = sorted({c.strike for c in chain.select("put", chain.expirations[0])})
    assert set(np.round(np.diff(strikes), 6)) == {10.0}  # 577.73 is in the 500-1500 band
    assert min(strikes) < 0.9 * chain.underlying_price < 1.1 * chain.underlying_price < max(strikes)


def test_chain_is_reproducible(modeled: ModeledOptions) -> None:
    first = modeled.option_chain("KO", datetime(2015, 3, 2, 21, tzinfo=UTC), max_dte=45)
    second = modeled.option_chain("KO", datetime(2015, 3, 2, 21, tzinfo=UTC), max_dte=45)
    assert first.model_dump() == second.model_dump()
    assert any("adjusted close" in n for n in first.provenance.notes)


def test_dte_window_filters_expirations(modeled: ModeledOptions) -> None:
    chain = modeled.option_chain("AAPL", AS_OF, min_dte=14, max_dte=45)
    assert all(14 <= c.dte <= 45 for c in chain.contracts)
    assert chain.expirations == sorted({c.expiration for c in chain.contracts})


def test_unmodelable_underlyings_are_refused(modeled: ModeledOptions) -> None:
    with pytest.raises(NoData, match="crypto"):
        modeled.option_chain("BTC-USD", datetime(2021, 1, 5, tzinfo=UTC))
    with pytest.raises(NoData, match="below"):
        modeled.option_chain("RRC", datetime(2000, 5, 1, tzinfo=UTC))  # an adjusted 0.89
    with pytest.raises(NoData, match="history"):
        modeled.option_chain("FB", datetime(2012, 5, 30, tzinfo=UTC))  # 8 bars


def test_chain_uses_only_closes_known_at_as_of() -> None:
    bundled = BundledProvider()
    modeled = ModeledOptions(ProviderChain([bundled]))
    before_close = modeled.option_chain("AAPL", datetime(2012, 6, 1, 19, 59, tzinfo=UTC))
    after_close = modeled.option_chain("AAPL", datetime(2012, 6, 1, 20, 1, tzinfo=UTC))
    assert before_close.underlying_price == 577.73  # 31 May
    assert after_close.underlying_price == 560.99  # 1 June, once it had closed


# -- stock splits: volatility from split-free returns, prices as traded --------------------


def _around(series: pd.Series, day: date) -> tuple[float, float]:
    """The values of the last bar before ``day`` and of ``day`` itself."""
    i = int(series.index.searchsorted(pd.Timestamp(day).tz_localize(series.index.tz)))
    assert series.index[i].date() == day
    return float(series.iloc[i - 1]), float(series.iloc[i])


def _plain_hv(series: pd.Series, window: int = 20) -> float:
    returns = np.diff(np.log(series.dropna().to_numpy()[-(window + 1) :]))
    return float(returns.std(ddof=1) * math.sqrt(252))


def _atm_put_iv(chain: OptionChain) -> float:
    puts = chain.select("put", chain.expirations[0])
    return min(puts, key=lambda p: abs(p.strike - chain.underlying_price)).iv


@pytest.mark.parametrize(
    ("symbol", "as_of", "split_day", "spot"),
    [
        ("AAPL", datetime(2005, 3, 15, 21, tzinfo=UTC), date(2005, 2, 28), 40.96),  # 2-for-1
        ("MSFT", datetime(2003, 3, 3, 21, tzinfo=UTC), date(2003, 2, 18), 23.54),  # 2-for-1
    ],
)
def test_a_split_in_the_window_does_not_inflate_the_modeled_volatility(
    modeled: ModeledOptions, symbol: str, as_of: datetime, split_day: date, spot: float
) -> None:
    stored = pd.read_parquet(BUNDLED_DIR / "bars" / f"{symbol}.parquet")["close"]
    before, on = _around(stored, split_day)
    assert on / before == pytest.approx(0.5, abs=0.05)  # the bundled closes are as traded
    bars = BundledProvider().daily_bars(symbol, as_of)
    close, adjusted = bars.frame["close"], bars.frame["adj_close"]
    for series in (close, adjusted):  # served on the as_of basis: no split jump
        before, on = _around(series, split_day)
        assert abs(on / before - 1.0) < 0.05
    assert f"2:1 on {split_day.isoformat()}" in bars.basis

    chain = modeled.option_chain(symbol, as_of, min_dte=14, max_dte=45)
    hv = _plain_hv(adjusted)
    assert 0.2 < hv < 0.6
    assert any(f"20d {hv:.1%}" in n and "adj_close" in n for n in chain.provenance.notes)
    assert hv < _atm_put_iv(chain) < 1.3 * hv  # the variance premium and the term blend
    # The underlying and the strikes stay on the price that traded, not the adjusted one.
    assert chain.underlying_price == spot == float(close.iloc[-1])
    strikes = {c.strike for c in chain.contracts}
    assert min(strikes) < spot < max(strikes)
    assert min(abs(k - spot) for k in strikes) <= strike_step(spot)


@pytest.mark.parametrize(
    ("as_of", "split_day", "ratio", "traded_before"),
    [
        (datetime(2021, 7, 30, 20, tzinfo=UTC), date(2021, 7, 20), 4, 750.0),
        (datetime(2024, 6, 20, 20, tzinfo=UTC), date(2024, 6, 10), 10, 1200.0),
    ],
)
def test_bundled_nvda_reads_as_traded_and_the_chain_follows_it(
    modeled: ModeledOptions, as_of: datetime, split_day: date, ratio: int, traded_before: float
) -> None:
    # The day before the split, the close reads what traded then (~$750, ~$1,200)...
    eve = BundledProvider().daily_bars("NVDA", as_of.replace(day=split_day.day - 1))
    assert float(eve.frame["close"].iloc[-1]) == pytest.approx(traded_before, rel=0.1)
    assert eve.frame.index[-1].date() < split_day
    # ...and after it, the window is on the new basis: no jump, the last close as traded.
    bars = BundledProvider().daily_bars("NVDA", as_of)
    close, adjusted = bars.frame["close"], bars.frame["adj_close"]
    before, on = _around(close, split_day)
    assert abs(on / before - 1.0) < 0.05
    assert before == pytest.approx(traded_before / ratio, rel=0.1)

    chain = modeled.option_chain("NVDA", as_of, min_dte=14, max_dte=45)
    hv = _plain_hv(adjusted)
    assert _plain_hv(close) == pytest.approx(hv, abs=0.005)  # no dividend in the window
    assert any(f"20d {hv:.1%}" in n for n in chain.provenance.notes)
    assert hv < _atm_put_iv(chain) < 1.3 * hv
    assert chain.underlying_price == float(close.iloc[-1])  # as traded on as_of
    assert f"{ratio}:1 on {split_day.isoformat()}" in bars.basis

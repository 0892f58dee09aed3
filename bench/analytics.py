"""Benchmark of alphadesk.analytics on real daily series and on a million options.

    .venv/bin/python bench/analytics.py [--options 1000000] [--sample 20000] [--series 0]
                                        [--quick]

1. Indicators and levels over a universe of real daily series, over their full history:
   the bundled market data (close-only series, adjusted, are measured with their
   adjusted close), or, without it, the 20-stock S&P 500 close-price dataset of skfolio
   (1990-2022) plus real OHLCV bars from the bokeh sample data. Indicators that need the
   intraday range or volume run on the series that have them.
2. Black–Scholes–Merton Greeks per second over a million random options, against
   py_vollib's scalar functions timed in the same run on a sample, with the largest
   difference between the two on that sample.

``--series N`` times the first N series of each kind (0: all of them).
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable
from datetime import UTC, datetime
from datetime import time as dtime
from typing import Any

import numpy as np
import pandas as pd

from alphadesk import analytics as an

CLOSE_ONLY: dict[str, Callable[[pd.DataFrame], Any]] = {
    "sma(20/50/200)": lambda b: [an.sma(b, p) for p in (20, 50, 200)],
    "ema(20)": an.ema,
    "rsi(14)": an.rsi,
    "macd": an.macd,
    "bollinger(20)": an.bollinger,
    "hv close-to-close(20)": an.hv_close_to_close,
    "swing points(5)": an.swing_points,
    "fibonacci": an.fibonacci_from_bars,
    "support/resistance": an.support_resistance,
    "trendlines": lambda b: [an.trendline(b, "support"), an.trendline(b, "resistance")],
    "trend assessment": an.trend_assessment,
    "extension": an.extension_from_support,
    "confluence zones": an.confluence_zones,
    "chart patterns": an.detect_patterns,
}
WITH_RANGE: dict[str, Callable[[pd.DataFrame], Any]] = {
    "atr(14)": an.atr,
    "adx(14)": an.adx,
    "stochastic": an.stochastic,
    "kdj": an.kdj,
    "obv": an.obv,
    "vwap(20)": an.vwap,
    "candlesticks": lambda b: an.candlestick_patterns(b, lookback=len(b)),
    "hv yang-zhang(20)": an.hv_yang_zhang,
    "support/resistance": an.support_resistance,
    "chart patterns": an.detect_patterns,
}


def _bundled_universe() -> dict[str, pd.DataFrame] | None:
    """Every bundled series over its full history (adj_close-only series as the close)."""
    try:
        from alphadesk.data.providers.bundled import BundledProvider
    except ImportError:
        return None
    provider = BundledProvider()
    out = {}
    for cov in provider.coverage():
        if cov.end is None:
            continue
        as_of = datetime.combine(cov.end, dtime(23, 59), tzinfo=UTC)
        bars = provider.daily_bars(cov.symbol, as_of)
        if "close" in bars.fields:
            cols = [c for c in ("open", "high", "low", "close", "volume") if c in bars.fields]
            out[cov.symbol] = bars.frame[cols]
        else:
            out[cov.symbol] = bars.frame[["adj_close"]].rename(columns={"adj_close": "close"})
    return out


def _skfolio_universe() -> dict[str, pd.DataFrame]:
    from skfolio.datasets import load_sp500_dataset

    prices = load_sp500_dataset()
    index = pd.DatetimeIndex(prices.index).tz_localize("America/New_York")
    return {
        sym: pd.DataFrame({"close": prices[sym].to_numpy(float)}, index=index)
        for sym in prices.columns
    }


def _ohlcv_universe() -> dict[str, pd.DataFrame]:
    from bokeh_sampledata import stocks

    out = {}
    for sym in ("AAPL", "MSFT", "IBM", "GOOG"):
        raw = pd.DataFrame(getattr(stocks, sym))
        index = pd.DatetimeIndex(pd.to_datetime(raw["date"])).tz_localize("America/New_York")
        out[sym] = raw[["open", "high", "low", "close", "volume"]].astype(float).set_axis(index)
    return out


def _time_universe(
    title: str,
    universe: dict[str, pd.DataFrame],
    functions: dict[str, Callable[[pd.DataFrame], Any]],
) -> None:
    bars = sum(len(b) for b in universe.values())
    first = min(b.index[0] for b in universe.values()).date()
    last = max(b.index[-1] for b in universe.values()).date()
    print(f"\n{title}: {len(universe)} series, {bars:,} bars, {first} to {last}")
    print(f"  {'computation':<24}{'total ms':>10}{'ms/series':>11}{'bars/s':>14}{'refused':>9}")
    for name, fn in functions.items():
        refused = 0
        start = time.perf_counter()
        for frame in universe.values():
            try:
                fn(frame)
            except an.AnalyticsError:  # e.g. a history too short for SMA(200)
                refused += 1
        elapsed = time.perf_counter() - start
        print(
            f"  {name:<24}{elapsed * 1e3:>10.1f}{elapsed * 1e3 / len(universe):>11.2f}"
            f"{bars / elapsed:>14,.0f}{refused:>9}"
        )


def _random_options(n: int, seed: int = 7) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    spot = rng.uniform(20, 500, n)
    return (
        spot,
        spot * rng.uniform(0.6, 1.4, n),
        rng.uniform(1 / 365, 2.0, n),
        rng.uniform(0.0, 0.06, n),
        rng.uniform(0.05, 1.2, n),
        rng.random(n) < 0.5,
        rng.uniform(0.0, 0.03, n),
    )


def _best_of(runs: int, fn: Callable[[], Any]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _bench_greeks(n: int, sample: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from py_vollib.black_scholes_merton.greeks import analytical as ref
    S, K, T, r, sigma, call, q = _random_options(n)
    vec = _best_of(3, lambda: an.bs_greeks(S, K, T, r, sigma, call, q))
    price_t = _best_of(3, lambda: an.bs_price(S, K, T, r, sigma, call, q))
    prices = np.asarray(an.bs_price(S, K, T, r, sigma, call, q))
    iv_n = min(n, 200_000)
    iv_t = _best_of(
        1,
        lambda: an.implied_vol(
            prices[:iv_n], S[:iv_n], K[:iv_n], T[:iv_n], r[:iv_n], call[:iv_n], q[:iv_n]
        ),
    )
    funcs = (ref.delta, ref.gamma, ref.theta, ref.vega, ref.rho)
    start = time.perf_counter()
    theirs = np.array(
        [
            [f("c" if call[i] else "p", S[i], K[i], T[i], r[i], sigma[i], q[i]) for f in funcs]
            for i in range(sample)
        ]
    )
    loop = time.perf_counter() - start
    g = an.bs_greeks(
        S[:sample], K[:sample], T[:sample], r[:sample], sigma[:sample], call[:sample], q[:sample]
    )
    ours = np.column_stack([g.delta, g.gamma, g.theta, g.vega, g.rho])
    ours_rate, their_rate = n / vec, sample / loop
    print(f"\nBlack-Scholes-Merton over {n:,} random options (best of 3 runs)")
    print(f"  bs_greeks (5 Greeks, vectorised)   {ours_rate:>14,.0f} options/s  ({vec:.3f} s)")
    print(f"  bs_price (vectorised)              {n / price_t:>14,.0f} options/s")
    print(f"  implied_vol (vectorised, {iv_n:,})  {iv_n / iv_t:>14,.0f} options/s")
    print(
        f"  py_vollib analytical, scalar loop  {their_rate:>14,.0f} options/s  "
        f"(sample of {sample:,}, {loop:.2f} s)"
    )
    print(f"  speed-up                           {ours_rate / their_rate:>14,.0f}x")
    print(f"  largest |difference| on the sample {np.abs(ours - theirs).max():>14.2e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--options", type=int, default=1_000_000)
    parser.add_argument("--sample", type=int, default=20_000)
    parser.add_argument("--series", type=int, default=0, help="the first N of each kind (0: all)")
    parser.add_argument("--quick", action="store_true", help="smallest setting: check that it runs")
    args = parser.parse_args()
    if args.quick:  # explicit options still win
        parser.set_defaults(options=10_000, sample=1_000, series=2)
        args = parser.parse_args()

    def first(series: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
        return dict(list(series.items())[: args.series]) if args.series else series

    universe = _bundled_universe()
    if universe:
        with_range = {
            s: b for s, b in universe.items() if {"high", "low", "volume"} <= set(b.columns)
        }
        _time_universe("Bundled market data, every series", first(universe), CLOSE_ONLY)
        _time_universe("Bundled market data, series with OHLCV", first(with_range), WITH_RANGE)
    else:
        _time_universe(
            "skfolio S&P 500 closes (close-only: levels use closes)",
            first(_skfolio_universe()),
            CLOSE_ONLY,
        )
        _time_universe("bokeh sample OHLCV bars", first(_ohlcv_universe()), WITH_RANGE)
    _bench_greeks(args.options, args.sample)


if __name__ == "__main__":
    main()

"""Block-bootstrap intervals checked against arch's stationary bootstrap on real returns:
the same statistics, the same block length, endpoints within what arch's own seeds
scatter by; reproducible with a seed; differences paired on the same days."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
from tests.support.requires import from_test_extra

from alphadesk.analytics.bootstrap import (
    BootstrapSettings,
    bootstrap_intervals,
    stationary_blocks,
)
from alphadesk.analytics.errors import InvalidInput

arch_bootstrap = from_test_extra("arch.bootstrap")

BLOCK, REPS, SEEDS = 20, 2000, 5


def _annual(r: np.ndarray) -> float:
    return math.expm1(np.log1p(r).sum() * 252 / r.size)


def _sharpe(r: np.ndarray) -> float:
    return float(r.mean() / r.std(ddof=1) * math.sqrt(252))


@pytest.fixture(scope="module")
def returns(real_daily: dict[str, pd.DataFrame], real_close_only: dict[str, pd.DataFrame]):
    """Ten years of real daily returns: the S&P 500 and Exxon over the same days."""
    index = real_daily["^GSPC"]["close"].loc["2003":"2012"]
    xom = real_close_only["XOM"]["close"]
    both = pd.concat([index, xom.reindex(index.index, method="ffill")], axis=1).dropna()
    daily = both.pct_change().dropna()
    return daily.iloc[:, 0].to_numpy(), daily.iloc[:, 1].to_numpy()


def _agree(ours: Callable[[int], tuple[float, float]], func: Any, *data: np.ndarray) -> None:
    """Our interval and arch's percentile interval, each drawn with several seeds: their
    mean endpoints agree within four standard errors of the seeds' scatter."""
    mine = np.array([ours(seed) for seed in range(SEEDS)])
    theirs = np.array(
        [
            arch_bootstrap.StationaryBootstrap(BLOCK, *data, seed=100 + seed)
            .conf_int(func, reps=REPS, method="percentile", size=0.95)
            .ravel()
            for seed in range(SEEDS)
        ]
    )
    error = np.sqrt(mine.var(axis=0, ddof=1) / SEEDS + theirs.var(axis=0, ddof=1) / SEEDS)
    gap = np.abs(mine.mean(axis=0) - theirs.mean(axis=0))
    assert (gap <= 4 * error).all(), (mine.mean(axis=0), theirs.mean(axis=0), error)


def _ours(series: dict[str, np.ndarray], name: str, statistic: str) -> Callable[[int], Any]:
    def interval(seed: int) -> tuple[float, float]:
        settings = BootstrapSettings(block=BLOCK, replications=REPS, seed=seed)
        got = getattr(bootstrap_intervals(series, "index", settings)[name], statistic)
        return got.low, got.high

    return interval


@pytest.mark.slow
def test_annual_return_and_sharpe_intervals_match_arch(returns) -> None:
    market, _ = returns
    got = bootstrap_intervals({"index": market})["index"]
    assert got.annual_return.estimate == pytest.approx(_annual(market))
    assert got.sharpe.estimate == pytest.approx(_sharpe(market))
    series = {"index": market}
    _agree(_ours(series, "index", "annual_return"), _annual, market)
    _agree(_ours(series, "index", "sharpe"), _sharpe, market)


@pytest.mark.slow
def test_the_difference_is_paired_on_the_same_days_as_arch_pairs_it(returns) -> None:
    market, stock = returns
    series = {"index": market, "stock": stock}
    _agree(
        _ours(series, "stock", "excess_sharpe"), lambda a, b: _sharpe(b) - _sharpe(a), market, stock
    )
    _agree(
        _ours(series, "stock", "excess_annual_return"),
        lambda a, b: _annual(b) - _annual(a),
        market,
        stock,
    )


def test_a_difference_on_the_same_days_cancels_what_both_legs_share(returns) -> None:
    market, _ = returns
    # A copy of the benchmark differs from it by exactly nothing in every draw, and a
    # steady edge of 2 bp a day is told apart from noise though each leg alone is wide.
    tilted = bootstrap_intervals(
        {"index": market, "same": market.copy(), "edge": market + 0.0002}, "index"
    )
    same = tilted["same"].excess_annual_return
    assert same is not None and same.low == same.high == 0.0
    edge = tilted["edge"].excess_annual_return
    assert edge is not None and edge.excludes_zero()
    assert not tilted["edge"].annual_return.excludes_zero()


def test_the_same_seed_gives_the_same_intervals_and_another_seed_others(returns) -> None:
    market, stock = returns
    series = {"index": market, "stock": stock}
    first = bootstrap_intervals(series, "index", BootstrapSettings(seed=7))
    assert bootstrap_intervals(series, "index", BootstrapSettings(seed=7)) == first
    assert bootstrap_intervals(series, "index", BootstrapSettings(seed=8)) != first


def test_blocks_cover_every_day_once_with_the_stated_mean_length() -> None:
    rng = np.random.default_rng(0)
    days = 2500
    starts, lengths = stationary_blocks(days, 20.0, 400, rng)
    assert (lengths.sum(axis=1) == days).all()
    assert starts.min() >= 0 and starts.max() < days and lengths.min() >= 0
    # Geometric lengths of mean 20: about 2500 / 20 blocks a resample (the last one cut).
    blocks = (lengths > 0).sum(axis=1).mean()
    assert blocks == pytest.approx(days / 20, rel=0.03)


@pytest.mark.parametrize(
    ("series", "said"),
    [
        ({"a": [0.01, 0.02], "b": [0.01]}, "same days"),
        ({"a": [0.01, np.nan]}, "finite"),
        ({}, "no return series"),
    ],
)
def test_bad_input_says_what_is_wrong(series: dict, said: str) -> None:
    with pytest.raises(InvalidInput, match=said):
        bootstrap_intervals(series)

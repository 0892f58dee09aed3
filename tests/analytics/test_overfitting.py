"""The probabilistic and deflated Sharpe ratios and PBO by CSCV, pinned against hand
computations, the 2014 paper's worked example and independent implementations."""

from __future__ import annotations

import math
from itertools import combinations
from statistics import NormalDist

import numpy as np
import pytest
import quantproof  # independent references, test-only
from scipy import stats

from alphadesk.analytics.errors import InsufficientData, InvalidInput
from alphadesk.analytics.overfitting import (
    MIN_RETURNS,
    deflated_sharpe_ratio,
    expected_max_sharpe,
    probabilistic_sharpe_ratio,
    probability_of_backtest_overfitting,
    sharpe_moments,
)


def _phi(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def test_psr_by_hand() -> None:
    # SR 0.1 over 101 normal returns: z = 0.1 · √100 / √(1 + 2/4 · 0.01)
    z = 0.1 * 10 / math.sqrt(1 + 0.5 * 0.01)
    assert probabilistic_sharpe_ratio(0.1, 0.0, 101) == pytest.approx(_phi(z), abs=1e-12)
    # negative skew and fat tails widen the error: the same Sharpe proves less
    assert probabilistic_sharpe_ratio(0.1, 0.0, 101, skew=-1, kurtosis=6) < _phi(z)


def test_expected_max_sharpe_by_hand() -> None:
    # the quantiles from the standard library's normal distribution, not scipy's
    z = NormalDist().inv_cdf
    gamma = 0.5772156649015329  # Euler's constant
    spread = (1 - gamma) * z(1 - 1 / 10) + gamma * z(1 - 1 / (10 * math.e))
    assert expected_max_sharpe(10, 0.04) == pytest.approx(0.2 * spread, rel=1e-6)
    assert expected_max_sharpe(1, 0.04) == 0.0
    assert expected_max_sharpe(10, 0.0) == 0.0


def test_the_2014_papers_worked_example() -> None:
    # Bailey & López de Prado (2014), "The Deflated Sharpe Ratio", numerical example:
    # 100 trials, annualised Sharpe variance 1/2, 1,250 daily returns (250 a year), best
    # annualised Sharpe 2.5, skew −3, kurtosis 10: SR0 ≈ 0.1132 per day, DSR ≈ 0.9004.
    benchmark = expected_max_sharpe(100, 0.5 / 250)
    assert benchmark == pytest.approx(0.1132, abs=5e-5)
    dsr = probabilistic_sharpe_ratio(2.5 / math.sqrt(250), benchmark, 1250, -3, 10)
    assert dsr == pytest.approx(0.9004, abs=5e-4)


def test_more_trials_deflate_more() -> None:
    rng = np.random.default_rng(7)
    returns = rng.normal(0.001, 0.01, 500)
    figures = [deflated_sharpe_ratio(returns, n).probability for n in (1, 10, 100, 1000)]
    assert figures == sorted(figures, reverse=True)
    one = deflated_sharpe_ratio(returns, 1)
    assert one.benchmark == 0
    m = sharpe_moments(returns)
    assert one.probability == pytest.approx(
        probabilistic_sharpe_ratio(m.sharpe, 0, 500, m.skew, m.kurtosis)
    )


def test_moments_are_the_population_estimators() -> None:
    rng = np.random.default_rng(3)
    returns = rng.standard_t(4, 300) * 0.01
    m = sharpe_moments(returns)
    assert m.skew == pytest.approx(stats.skew(returns, bias=True))
    assert m.kurtosis == pytest.approx(stats.kurtosis(returns, fisher=False, bias=True))
    assert m.sharpe == pytest.approx(returns.mean() / returns.std(ddof=1))


@pytest.mark.parametrize("trials", [2, 25, 400])
def test_dsr_agrees_with_quantproof(trials: int) -> None:
    rng = np.random.default_rng(trials)
    returns = rng.standard_t(5, 750) * 0.01 + 0.0008
    variance = 0.3 / 252
    ours = deflated_sharpe_ratio(returns, trials, variance)
    theirs = quantproof.deflated_sharpe(returns, trials, trial_sr_std=math.sqrt(variance))
    assert ours.probability == pytest.approx(theirs["deflated_sharpe_probability"], abs=1e-10)
    assert ours.benchmark == pytest.approx(theirs["expected_max_sr_null"], abs=1e-12)
    assert ours.kurtosis == pytest.approx(theirs["kurtosis"])


def test_dsr_bad_input_names_the_minimum() -> None:
    with pytest.raises(InsufficientData, match=f"at least {MIN_RETURNS} returns, but 10"):
        deflated_sharpe_ratio(np.full(10, 0.01) + np.arange(10) * 1e-4, 5)
    with pytest.raises(InvalidInput, match="do not vary"):
        deflated_sharpe_ratio(np.full(100, 0.001), 5)
    with pytest.raises(InvalidInput, match="at least 1"):
        deflated_sharpe_ratio(np.linspace(-0.01, 0.02, 100), 0)
    with pytest.raises(InvalidInput, match="NaN"):
        deflated_sharpe_ratio([0.01, float("nan"), *([0.0] * 40)], 5)


def _blocks(sums: list[float], per_block: int = 4) -> np.ndarray:
    """A series whose blocks have the given sums and the same within-block spread."""
    wiggle = np.array([1.0, -1.0, 0.5, -0.5])[:per_block] * 0.01
    return np.concatenate([s / per_block + wiggle for s in sums])


def test_pbo_by_hand_a_mirror_pair_always_overfits() -> None:
    # B = −A and A's block sums (1, 2, 4, −7) add up to 0: in every split the half where A
    # gained is the half where it lost, so the in-sample winner is the out-of-sample
    # loser: rank 1 of 2, ω = 1/3, logit log(1/2), PBO 1.
    a = _blocks([0.01, 0.02, 0.04, -0.07])
    result = probability_of_backtest_overfitting(np.column_stack([a, -a]), blocks=4)
    assert result.splits == 6
    assert result.probability == 1.0
    assert result.logits == pytest.approx([math.log(0.5)] * 6)


def test_pbo_by_hand_a_persistent_edge_never_overfits() -> None:
    # A = B + a constant: same spread, higher mean in every half, so A wins in and out of
    # sample: rank 2 of 2, ω = 2/3, logit log 2, PBO 0.
    b = _blocks([0.01, -0.03, 0.02, 0.0])
    result = probability_of_backtest_overfitting(np.column_stack([b + 0.002, b]), blocks=4)
    assert result.probability == 0.0
    assert result.logits == pytest.approx([math.log(2)] * 6)


def _noise(rows: int, trials: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(0, 0.01, (rows, trials))


def test_pbo_of_noise_is_near_a_half_and_of_skill_near_zero() -> None:
    # one draw of noise can land anywhere (its splits share the data); on average over
    # draws, the in-sample winner is a coin toss out of sample
    draws = [probability_of_backtest_overfitting(_noise(320, 10, s)) for s in range(30)]
    assert draws[0].splits == math.comb(16, 8) == 12870
    assert 0.4 < np.mean([d.probability for d in draws]) < 0.6
    skilled = _noise(1600, 20, 2)
    skilled[:, 0] += 0.003  # one trial with a real, persistent edge
    assert probability_of_backtest_overfitting(skilled).probability < 0.05


# 16 blocks (12,870 splits) once; 10 and 8 blocks (252 and 70 splits) check other counts at
# a fraction of the reference's cost. Each divides the 640 rows (no row is dropped).
@pytest.mark.parametrize(("seed", "blocks"), [(11, 16), (12, 10), (13, 8)])
def test_pbo_agrees_with_phacker(seed: int, blocks: int) -> None:
    table = _noise(640, 12, seed)
    table[:, seed % 12] += 0.0008
    ours = probability_of_backtest_overfitting(table, blocks=blocks)
    cscv = pytest.importorskip("phacker.cscv", reason="phacker ships wheels for 3.11/x86-64")
    pbo, logits = cscv.cscv_reference(table, S=blocks)
    assert ours.probability == pytest.approx(pbo, abs=1e-12)
    assert ours.logits == pytest.approx(list(logits), abs=1e-12)
    assert ours.probability == pytest.approx(cscv.cscv(table, S=blocks)[0], abs=1e-12)


def test_pbo_splits_are_every_half_of_the_blocks() -> None:
    result = probability_of_backtest_overfitting(_noise(60, 3, 4), blocks=6)
    assert result.splits == len(list(combinations(range(6), 3)))
    # 60 rows into 6 blocks: all used; 61 rows: the oldest one dropped
    assert result.observations == 60
    assert probability_of_backtest_overfitting(_noise(61, 3, 4), blocks=6).observations == 60


def test_a_trial_that_never_trades_scores_zero() -> None:
    table = _noise(64, 3, 5)
    table[:, 1] = 0.0
    assert 0 <= probability_of_backtest_overfitting(table).probability <= 1


@pytest.mark.parametrize(
    ("shape", "blocks", "error", "message"),
    [
        ((100, 1), 16, InsufficientData, "needs at least 2 trials"),
        ((31, 4), 16, InsufficientData, "needs at least 32 returns, but 31"),
        ((100, 4), 15, InvalidInput, "even number of blocks from 2 to 20, got 15"),
        ((100, 4), 22, InvalidInput, "got 22"),
        ((100,), 16, InvalidInput, "one row per period"),
    ],
)
def test_pbo_bad_input_names_the_minimum(
    shape: tuple[int, ...], blocks: int, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        probability_of_backtest_overfitting(np.ones(shape), blocks=blocks)

"""How much of a backtest's Sharpe ratio survives the search that found it.

- The **probabilistic Sharpe ratio** (PSR): the probability that the true Sharpe ratio
  exceeds a benchmark, given the sample length and the returns' skew and kurtosis.
- The **deflated Sharpe ratio** (DSR; Bailey & López de Prado, 2014): the PSR against the
  Sharpe ratio the best of N skill-less trials would show by chance, from the trials'
  Sharpe variance.
- The **probability of backtest overfitting** (PBO) by combinatorially symmetric
  cross-validation (CSCV; Bailey, Borwein, López de Prado & Zhu, 2017): how often the trial
  that is best in-sample ranks at or below the median out-of-sample.

Conventions: Sharpe ratios here are per period (mean / sample std, ddof 1), not
annualised; kurtosis is the plain (non-excess) one, 3 for a normal distribution; skew and
kurtosis are the population moment estimators the PSR formula assumes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.stats import norm

from .errors import InsufficientData, InvalidInput

__all__ = [
    "DEFAULT_BLOCKS",
    "MAX_BLOCKS",
    "MIN_RETURNS",
    "DeflatedSharpe",
    "Overfitting",
    "SharpeMoments",
    "deflated_sharpe_ratio",
    "expected_max_sharpe",
    "probabilistic_sharpe_ratio",
    "probability_of_backtest_overfitting",
    "sharpe_moments",
]

#: Fewest returns for a Sharpe ratio with trustworthy skew and kurtosis.
MIN_RETURNS = 30
#: CSCV's blocks by default (the paper's choice: 12,870 splits).
DEFAULT_BLOCKS = 16
#: More blocks than this make too many splits (C(22, 11) = 705,432) to compute.
MAX_BLOCKS = 20
_EULER_GAMMA = 0.5772156649015329


@dataclass(frozen=True, slots=True)
class SharpeMoments:
    """A return series' per-period Sharpe ratio and the moments its error depends on."""

    sharpe: float
    skew: float
    kurtosis: float
    observations: int


@dataclass(frozen=True, slots=True)
class DeflatedSharpe:
    """The deflated Sharpe ratio of the best of ``trials`` trials.

    Attributes:
        probability: P(true Sharpe > ``benchmark``): the deflated Sharpe ratio.
        sharpe: The observed per-period Sharpe ratio.
        benchmark: The expected maximum per-period Sharpe of ``trials`` skill-less trials.
        trials: How many trials the search made.
        sharpe_variance: The per-period variance of the trials' Sharpe ratios used.
        skew, kurtosis, observations: The returns' moments and length.
    """

    probability: float
    sharpe: float
    benchmark: float
    trials: int
    sharpe_variance: float
    skew: float
    kurtosis: float
    observations: int

    def annualised(self, periods_per_year: float = 252) -> tuple[float, float]:
        """The observed Sharpe ratio and the benchmark, annualised."""
        scale = math.sqrt(periods_per_year)
        return self.sharpe * scale, self.benchmark * scale


@dataclass(frozen=True, slots=True)
class Overfitting:
    """PBO by CSCV.

    Attributes:
        probability: Share of splits whose in-sample best trial ranks at or below the
            out-of-sample median (logit <= 0).
        logits: One logit of the best trial's out-of-sample relative rank per split.
        blocks: How many blocks the rows were cut into.
        trials: How many trials (columns) were compared.
        observations: Rows used; the oldest ``len % blocks`` rows are dropped so that the
            blocks are equal.
    """

    probability: float
    logits: tuple[float, ...]
    blocks: int
    trials: int
    observations: int

    @property
    def splits(self) -> int:
        return len(self.logits)


def _finite(values: ArrayLike | pd.Series | pd.DataFrame, what: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if not np.isfinite(array).all():
        raise InvalidInput(f"{what} contain NaN or infinite values; drop or fill them first")
    return array


def sharpe_moments(returns: ArrayLike | pd.Series) -> SharpeMoments:
    """The per-period Sharpe ratio, skew and (non-excess) kurtosis of ``returns``.

    Raises:
        InsufficientData: Fewer than ``MIN_RETURNS`` returns.
        InvalidInput: Non-finite or constant returns (no Sharpe ratio).
    """
    r = _finite(returns, "returns").ravel()
    if r.size < MIN_RETURNS:
        raise InsufficientData("a deflated Sharpe ratio", MIN_RETURNS, int(r.size), "returns")
    centred = r - r.mean()
    m2 = float(np.mean(centred**2))
    if m2 <= (1e-12 * abs(float(r.mean()))) ** 2 or np.ptp(r) == 0:
        raise InvalidInput("the returns do not vary, so they have no Sharpe ratio")
    return SharpeMoments(
        sharpe=float(r.mean() / r.std(ddof=1)),
        skew=float(np.mean(centred**3) / m2**1.5),
        kurtosis=float(np.mean(centred**4) / m2**2),
        observations=int(r.size),
    )


def probabilistic_sharpe_ratio(
    sharpe: float,
    benchmark: float,
    observations: int,
    skew: float = 0.0,
    kurtosis: float = 3.0,
) -> float:
    """P(true Sharpe > ``benchmark``) given an observed per-period ``sharpe``.

    ``Φ((SR − SR*) √(T − 1) / √(1 − γ₃ SR + (γ₄ − 1) / 4 · SR²))``.

    Raises:
        InsufficientData: Fewer than 2 observations.
        InvalidInput: Moments that give the Sharpe estimate a non-positive variance.
    """
    if observations < 2:
        raise InsufficientData("a probabilistic Sharpe ratio", 2, observations, "returns")
    spread = 1.0 - skew * sharpe + (kurtosis - 1.0) / 4.0 * sharpe**2
    if not spread > 0:
        raise InvalidInput(
            f"skew {skew:g} and kurtosis {kurtosis:g} give a Sharpe ratio of {sharpe:g} no "
            "positive variance; check that kurtosis is the non-excess one (3 for a normal)"
        )
    z = (sharpe - benchmark) * math.sqrt(observations - 1) / math.sqrt(spread)
    return float(norm.cdf(z))


def expected_max_sharpe(trials: int, sharpe_variance: float) -> float:
    """The expected maximum Sharpe ratio of ``trials`` skill-less trials.

    ``√V · ((1 − γ) Φ⁻¹(1 − 1/N) + γ Φ⁻¹(1 − 1/(N e)))`` with γ Euler's constant; 0 for
    one trial (no selection).

    Raises:
        InvalidInput: Fewer than 1 trial or a negative variance.
    """
    if trials < 1:
        raise InvalidInput(f"trials must be at least 1, got {trials}")
    if not sharpe_variance >= 0:
        raise InvalidInput(f"the trials' Sharpe variance must be >= 0, got {sharpe_variance}")
    if trials == 1:
        return 0.0
    spread = (1 - _EULER_GAMMA) * norm.ppf(1 - 1 / trials) + _EULER_GAMMA * norm.ppf(
        1 - 1 / (trials * math.e)
    )
    return float(math.sqrt(sharpe_variance) * spread)


def deflated_sharpe_ratio(
    returns: ArrayLike | pd.Series,
    trials: int,
    sharpe_variance: float | None = None,
) -> DeflatedSharpe:
    """The deflated Sharpe ratio of ``returns``, the best of ``trials`` trials.

    Args:
        returns: The chosen trial's periodic returns (at least ``MIN_RETURNS``).
        trials: How many trials the search made, the chosen one included.
        sharpe_variance: The variance of the trials' per-period Sharpe ratios. ``None``
            assumes skill-less trials of this length: ``1 / (T − 1)``, the Sharpe
            estimate's own variance at a true Sharpe of 0. Pass the measured variance
            when the trials are known; it is usually larger.

    Raises:
        InsufficientData: Too few returns.
        InvalidInput: Fewer than 1 trial, a negative variance, constant returns.
    """
    moments = sharpe_moments(returns)
    variance = 1 / (moments.observations - 1) if sharpe_variance is None else sharpe_variance
    benchmark = expected_max_sharpe(trials, variance)
    probability = probabilistic_sharpe_ratio(
        moments.sharpe, benchmark, moments.observations, moments.skew, moments.kurtosis
    )
    return DeflatedSharpe(
        probability=probability,
        sharpe=moments.sharpe,
        benchmark=benchmark,
        trials=trials,
        sharpe_variance=variance,
        skew=moments.skew,
        kurtosis=moments.kurtosis,
        observations=moments.observations,
    )


def _check_cscv(shape: tuple[int, ...], blocks: int) -> None:
    if len(shape) != 2:
        raise InvalidInput("trial returns must be a table: one row per period, one column a trial")
    rows, trials = shape
    if trials < 2:
        raise InsufficientData("PBO by CSCV", 2, trials, "trials (columns)")
    if blocks < 2 or blocks % 2 or blocks > MAX_BLOCKS:
        raise InvalidInput(
            f"CSCV needs an even number of blocks from 2 to {MAX_BLOCKS}, got {blocks}; "
            f"{DEFAULT_BLOCKS} is usual"
        )
    if rows < 2 * blocks:
        raise InsufficientData(
            f"PBO by CSCV with {blocks} blocks (2 per block)", 2 * blocks, rows, "returns"
        )


def _split_sharpes(sums: np.ndarray, squares: np.ndarray, rows: int) -> np.ndarray:
    """Per-period Sharpe ratios from sums and sums of squares over ``rows`` periods.

    A trial whose returns do not vary over the rows (one that never trades) scores 0.
    """
    mean = sums / rows
    variance = np.maximum(squares - rows * mean**2, 0.0) / (rows - 1)
    sd = np.sqrt(variance)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sd > 0, mean / np.where(sd > 0, sd, 1.0), 0.0)


def probability_of_backtest_overfitting(
    trial_returns: ArrayLike | pd.DataFrame, blocks: int = DEFAULT_BLOCKS
) -> Overfitting:
    """PBO by CSCV over a T×N table of the trials' periodic returns.

    The rows are cut into ``blocks`` equal blocks (the oldest ``T % blocks`` rows are
    dropped). For every choice of half the blocks as in-sample (the rest out-of-sample,
    order kept), the trial with the best in-sample Sharpe ratio is ranked out-of-sample
    among all N (1 = worst; ties rank low); ``ω = rank / (N + 1)`` and the logit
    ``log(ω / (1 − ω))``. PBO is the share of logits <= 0.

    Raises:
        InsufficientData: Fewer than 2 trials or fewer than 2 returns per block.
        InvalidInput: Not a table, non-finite values, an odd or out-of-range ``blocks``.
    """
    table = _finite(trial_returns, "trial returns")
    _check_cscv(table.shape, blocks)
    rows, trials = table.shape
    per_block = rows // blocks
    used = table[rows - per_block * blocks :].reshape(blocks, per_block, trials)
    sums, squares = used.sum(axis=1), (used**2).sum(axis=1)  # blocks × trials
    chosen = np.zeros((math.comb(blocks, blocks // 2), blocks), dtype=np.float64)
    for row, picked in enumerate(combinations(range(blocks), blocks // 2)):
        chosen[row, list(picked)] = 1.0
    half = per_block * blocks // 2
    inside = _split_sharpes(chosen @ sums, chosen @ squares, half)
    outside = _split_sharpes((1 - chosen) @ sums, (1 - chosen) @ squares, half)
    best = np.argmax(inside, axis=1)
    best_outside = outside[np.arange(len(best)), best][:, None]
    rank = 1 + np.sum(outside < best_outside, axis=1)
    omega = rank / (trials + 1)
    logits = np.log(omega / (1 - omega))
    return Overfitting(
        probability=float(np.mean(logits <= 0)),
        logits=tuple(float(x) for x in logits),
        blocks=blocks,
        trials=trials,
        observations=per_block * blocks,
    )

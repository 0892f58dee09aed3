"""Block-bootstrap confidence intervals for strategies traded over the same days.

Daily returns are not independent (volatility clusters, trends persist), so resampling
single days understates the uncertainty. The stationary bootstrap (Politis & Romano, 1994)
resamples blocks of consecutive days of random length, geometric with mean ``block``
(20 sessions, about a month, by default), wrapping around the end of the sample. Every
strategy is resampled on the *same* days in each replication, so the interval of a
difference (a strategy minus a benchmark) keeps the pairing: the market moves both legs
share cancel out instead of widening it.

Intervals are percentile intervals of ``replications`` resamples (2,000 by default) at
``level`` (95 %); a ``seed`` makes them reproducible to the bit. Statistics: the annual
return (compound, as :func:`~alphadesk.analytics.performance.cagr`), the annualised
Sharpe ratio (risk-free 0, as :func:`~alphadesk.analytics.performance.sharpe_ratio`),
and each one's difference from the benchmark's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .errors import InsufficientData, InvalidInput

__all__ = [
    "BLOCK",
    "REPLICATIONS",
    "BootstrapSettings",
    "Interval",
    "StrategyIntervals",
    "bootstrap_intervals",
    "stationary_indices",
]

BLOCK = 20.0  # expected block length, in sessions (about a month)
REPLICATIONS = 2000
_CHUNK = 250  # replications resampled at once (bounds the memory: chunk × days)


@dataclass(frozen=True)
class BootstrapSettings:
    """How the intervals are drawn (all stated beside them)."""

    block: float = BLOCK
    replications: int = REPLICATIONS
    level: float = 0.95
    seed: int = 0
    periods_per_year: float = 252.0


@dataclass(frozen=True)
class Interval:
    """A statistic of the sample and its bootstrap interval (``None``: undefined, e.g. a
    Sharpe ratio of returns that never vary)."""

    estimate: float | None
    low: float | None
    high: float | None

    def excludes_zero(self) -> bool:
        """Whether the interval lies wholly above or below zero."""
        if self.low is None or self.high is None:
            return False
        return self.low > 0 or self.high < 0


@dataclass(frozen=True)
class StrategyIntervals:
    """One strategy's intervals; the excess ones are against the benchmark (``None`` for
    the benchmark itself)."""

    annual_return: Interval
    sharpe: Interval
    excess_annual_return: Interval | None = None
    excess_sharpe: Interval | None = None


def stationary_indices(
    days: int, block: float, replications: int, rng: np.random.Generator
) -> np.ndarray:
    """``replications`` rows of ``days`` resampled day indices (Politis & Romano): each
    day starts a new block with probability ``1/block`` (the first always does), at a
    uniformly drawn day; otherwise it is the day after the previous one, wrapping round.

    Raises:
        InvalidInput: ``block`` below 1 or no days.
    """
    if block < 1:
        raise InvalidInput(f"the expected block length must be at least 1 day, got {block}")
    if days < 1:
        raise InvalidInput("there are no days to resample")
    starts = rng.integers(0, days, size=(replications, days))
    new = rng.random((replications, days)) < 1.0 / block
    new[:, 0] = True
    position = np.arange(days)
    # For each day, where its block began: the last new-block day at or before it.
    began = np.maximum.accumulate(np.where(new, position, 0), axis=1)
    first = np.take_along_axis(starts, began, axis=1)
    return (first + (position - began)) % days


def _annual_return(returns: np.ndarray, periods_per_year: float) -> np.ndarray:
    growth = np.log1p(returns).sum(axis=-1)
    return np.expm1(growth * periods_per_year / returns.shape[-1])


def _sharpe(returns: np.ndarray, periods_per_year: float) -> np.ndarray:
    sd = returns.std(axis=-1, ddof=1)
    mean = returns.mean(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = mean / sd * math.sqrt(periods_per_year)
    # A spread of rounding noise is no variation: those ratios are undefined too.
    return np.where(sd > 1e-12, ratio, np.nan)


def _matrix(returns: Mapping[str, ArrayLike]) -> tuple[list[str], np.ndarray]:
    names = list(returns)
    if not names:
        raise InvalidInput("no return series to bootstrap")
    rows = [np.asarray(returns[n], dtype=np.float64) for n in names]
    lengths = {row.size for row in rows}
    if len(lengths) != 1:
        raise InvalidInput(
            f"the series must cover the same days to be resampled together, got lengths "
            f"{sorted(lengths)}; align them on their common days first"
        )
    matrix = np.vstack(rows)
    if matrix.shape[1] < 2:
        raise InsufficientData("bootstrap intervals", 2, matrix.shape[1], unit="returns")
    if not np.isfinite(matrix).all() or (matrix <= -1).any():
        raise InvalidInput("returns must be finite and above -100 %")
    return names, matrix


def _replicates(
    matrix: np.ndarray, settings: BootstrapSettings
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per chunk of replications: annual returns and Sharpe ratios, strategies × draws."""
    rng = np.random.default_rng(settings.seed)
    days = matrix.shape[1]
    left = settings.replications
    while left > 0:
        size = min(_CHUNK, left)
        left -= size
        sample = matrix[:, stationary_indices(days, settings.block, size, rng)]
        yield (
            _annual_return(sample, settings.periods_per_year),
            _sharpe(sample, settings.periods_per_year),
        )


def _interval(estimate: float, draws: np.ndarray, level: float) -> Interval:
    if not math.isfinite(estimate):
        return Interval(None, None, None)
    finite = draws[np.isfinite(draws)]
    if finite.size < draws.size / 2:  # mostly undefined: no interval worth the name
        return Interval(estimate, None, None)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(finite, [tail, 1.0 - tail])
    return Interval(estimate, float(low), float(high))


def bootstrap_intervals(
    returns: Mapping[str, ArrayLike],
    benchmark: str | None = None,
    settings: BootstrapSettings | None = None,
) -> dict[str, StrategyIntervals]:
    """Each strategy's intervals, all resampled on the same days.

    Args:
        returns: Daily simple returns per strategy, over the same days.
        benchmark: The strategy the excess intervals are against (e.g. buy & hold).
        settings: Block length, replications, level, seed, periods per year.

    Raises:
        InvalidInput: Series of different lengths, non-finite returns, an unknown
            benchmark.
        InsufficientData: Fewer than 2 days.
    """
    settings = settings or BootstrapSettings()
    if not 0 < settings.level < 1:
        raise InvalidInput(f"the level must be between 0 and 1, got {settings.level}")
    names, matrix = _matrix(returns)
    if benchmark is not None and benchmark not in names:
        raise InvalidInput(f"benchmark {benchmark!r} is not among the series {names}")
    chunks = list(_replicates(matrix, settings))
    annual = np.concatenate([a for a, _ in chunks], axis=1)
    sharpe = np.concatenate([s for _, s in chunks], axis=1)
    year = settings.periods_per_year
    annual_now, sharpe_now = _annual_return(matrix, year), _sharpe(matrix, year)
    out: dict[str, StrategyIntervals] = {}
    base = None if benchmark is None else names.index(benchmark)
    for i, name in enumerate(names):
        ann = _interval(float(annual_now[i]), annual[i], settings.level)
        sr = _interval(float(sharpe_now[i]), sharpe[i], settings.level)
        if base is None or i == base:
            out[name] = StrategyIntervals(ann, sr)
            continue
        out[name] = StrategyIntervals(
            ann,
            sr,
            _interval(
                float(annual_now[i] - annual_now[base]), annual[i] - annual[base], settings.level
            ),
            _interval(
                float(sharpe_now[i] - sharpe_now[base]), sharpe[i] - sharpe[base], settings.level
            ),
        )
    return out

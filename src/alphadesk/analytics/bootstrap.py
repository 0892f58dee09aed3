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
    "stationary_blocks",
]

BLOCK = 20.0  # expected block length, in sessions (about a month)
REPLICATIONS = 2000
_CHUNK = 500  # replications drawn at once (bounds the memory: chunk × blocks)


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


def stationary_blocks(
    days: int, block: float, replications: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """The blocks of ``replications`` resamples of ``days`` days (Politis & Romano): each
    block starts at a uniformly drawn day and runs on for a geometric number of days with
    mean ``block``, wrapping round the end; the last block is cut so each resample has
    exactly ``days`` days. Returns the starts and the lengths (0 past the end), both
    replications × blocks.

    Raises:
        InvalidInput: ``block`` below 1 or no days.
    """
    if block < 1:
        raise InvalidInput(f"the expected block length must be at least 1 day, got {block}")
    if days < 1:
        raise InvalidInput("there are no days to resample")
    # Enough blocks that their lengths all but surely cover the days; rows that fall
    # short (about never) are drawn again.
    count = int(np.ceil(days / block + 8 * np.sqrt(days / block))) + 8
    lengths = rng.geometric(1.0 / block, size=(replications, count))
    short = lengths.sum(axis=1) < days
    while short.any():
        lengths[short] = rng.geometric(1.0 / block, size=(int(short.sum()), count))
        short = lengths.sum(axis=1) < days
    ends = np.minimum(np.cumsum(lengths, axis=1), days)
    cut = np.diff(ends, axis=1, prepend=0)
    starts = rng.integers(0, days, size=(replications, count))
    return starts, cut


def _annual_return(log_growth: np.ndarray, days: int, periods_per_year: float) -> np.ndarray:
    return np.expm1(log_growth * periods_per_year / days)


def _sharpe(total: np.ndarray, squares: np.ndarray, days: int, per_year: float) -> np.ndarray:
    mean = total / days
    variance = np.maximum(squares - days * mean**2, 0.0) / (days - 1)
    sd = np.sqrt(variance)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = mean / sd * math.sqrt(per_year)
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
    """Per chunk of replications: annual returns and Sharpe ratios, strategies × draws.

    A resample's sums are sums over its blocks, each the difference of two prefix sums of
    the series laid twice end to end (a block may wrap round): no resample is built."""
    rng = np.random.default_rng(settings.seed)
    days = matrix.shape[1]
    twice = np.concatenate([matrix, matrix], axis=1)
    prefix = {
        name: np.concatenate([np.zeros((len(matrix), 1)), np.cumsum(values, axis=1)], axis=1)
        for name, values in (("r", twice), ("log", np.log1p(twice)), ("sq", twice**2))
    }
    left = settings.replications
    while left > 0:
        size = min(_CHUNK, left)
        left -= size
        starts, lengths = stationary_blocks(days, settings.block, size, rng)
        sums = {
            name: (p[:, starts + lengths] - p[:, starts]).sum(axis=-1) for name, p in prefix.items()
        }
        yield (
            _annual_return(sums["log"], days, settings.periods_per_year),
            _sharpe(sums["r"], sums["sq"], days, settings.periods_per_year),
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
    days = matrix.shape[1]
    annual_now = _annual_return(np.log1p(matrix).sum(axis=1), days, year)
    sharpe_now = _sharpe(matrix.sum(axis=1), (matrix**2).sum(axis=1), days, year)
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

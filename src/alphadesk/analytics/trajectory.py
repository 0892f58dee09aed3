"""Where a series of scores is heading, iteration after iteration.

The input is one score per iteration (e.g. the best fuzzy goal score of each iteration,
in [0, 1]). The trend is the least-squares slope in score points per iteration:

* OSCILLATING first when steps of at least ``rate`` changed direction twice or more;
* CONVERGING: the slope is at least ``rate`` (0.05 = five points of the goal per
  iteration) and the last step did not fall back by more than ``rate``;
* DIVERGING: the slope is at most −``rate``;
* OSCILLATING: no such trend, but steps of at least ``rate`` that changed direction;
* STAGNANT: no trend and no such reversal (flat, or one step that led nowhere).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from .errors import InsufficientData, InvalidInput

__all__ = ["TrajectoryStats", "TrajectoryStatus", "classify_trajectory"]

TrajectoryStatus = Literal["CONVERGING", "DIVERGING", "OSCILLATING", "STAGNANT"]


@dataclass(frozen=True, slots=True)
class TrajectoryStats:
    """The classification and the figures behind it.

    Attributes:
        status: See the module.
        slope: Least-squares slope, score points per iteration.
        mean_step: Mean change between consecutive iterations.
        volatility: Standard deviation of the steps (0 with a single step).
        reversals: Direction changes among steps of at least ``rate``.
        best: Highest score so far; ``best_iteration`` its 1-based iteration.
        iterations_to_target: While converging, iterations the slope needs to reach
            ``target`` from the last score (None otherwise or when already there).
    """

    status: TrajectoryStatus
    slope: float
    mean_step: float
    volatility: float
    reversals: int
    best: float
    best_iteration: int
    iterations_to_target: int | None


def classify_trajectory(
    scores: Sequence[float], *, rate: float = 0.05, target: float = 1.0
) -> TrajectoryStats:
    """Classify ``scores`` (one per iteration, oldest first).

    Raises:
        InsufficientData: Fewer than 2 scores.
        InvalidInput: A NaN or infinite score.
    """
    values = np.asarray(scores, dtype=np.float64)
    if values.size < 2:
        raise InsufficientData("a trajectory", 2, int(values.size), unit="iterations")
    if not np.isfinite(values).all():
        raise InvalidInput("scores must be finite; score a failed iteration 0")
    steps = np.diff(values)
    x = np.arange(values.size, dtype=np.float64)
    slope = float(np.polyfit(x, values, 1)[0])
    big = steps[np.abs(steps) >= rate]
    reversals = int(np.sum(np.sign(big[1:]) != np.sign(big[:-1])))
    status: TrajectoryStatus
    if reversals >= 2:  # up, down and up again: the slope of a zigzag means little
        status = "OSCILLATING"
    elif slope >= rate and steps[-1] > -rate:
        status = "CONVERGING"
    elif slope <= -rate:
        status = "DIVERGING"
    elif reversals:
        status = "OSCILLATING"
    else:
        status = "STAGNANT"
    last = float(values[-1])
    to_target = None
    if status == "CONVERGING" and last < target:
        to_target = math.ceil((target - last) / slope)
    return TrajectoryStats(
        status=status,
        slope=round(slope, 6),
        mean_step=round(float(steps.mean()), 6),
        volatility=round(float(steps.std()), 6),
        reversals=reversals,
        best=float(values.max()),
        best_iteration=int(values.argmax()) + 1,
        iterations_to_target=to_target,
    )

"""Goals as criteria and fuzzy scores of backtest metrics against them.

A goal such as "Sharpe above 1 with drawdown under 20%" becomes criteria
(``sharpe >= 1.0``, ``max_drawdown <= 0.20``). Each metric then scores in [0, 1]: 1 when
the criterion is met, falling linearly to 0 over a metric's *tolerance* short of the
threshold (a Sharpe of 0.75 against 1 with tolerance 1 scores 0.75). A variant passes
when every criterion scores 1; the mean score ranks near misses.

Drawdowns are magnitudes here (0.20 = 20 %), whatever sign a metric function gives.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from .errors import InvalidInput

__all__ = [
    "METRICS",
    "Criterion",
    "CriterionScore",
    "FuzzyScore",
    "fuzzy_score",
    "parse_goal",
    "score_metrics",
]

Op = Literal[">=", "<="]


@dataclass(frozen=True, slots=True)
class _Metric:
    name: str
    words: tuple[str, ...]  # regex alternatives naming it in a goal
    op: Op  # the direction that is good
    percent: bool  # a "20" in a goal means 0.20
    tolerance: float  # how far short of the threshold the score reaches 0


METRICS: dict[str, _Metric] = {
    m.name: m
    for m in (
        _Metric("sharpe", (r"sharpe(?: ratio)?",), ">=", False, 1.0),
        _Metric("max_drawdown", (r"(?:max(?:imum)? )?draw ?downs?", r"\bdd\b"), "<=", True, 0.2),
        _Metric("win_rate", (r"win ?rate", r"hit ?rate"), ">=", True, 0.25),
        _Metric(
            "annualized_return",
            (r"(?:annual(?:ized)?|yearly) returns?", r"cagr"),
            ">=",
            True,
            0.2,
        ),
        _Metric("cumulative_return", (r"(?:total |cumulative )?returns?",), ">=", True, 0.3),
        _Metric("trades", (r"trades", r"round trips"), ">=", False, 10.0),
    )
}

_ABOVE = r"(?:above|over|greater than|more than|at least|exceeding|>=|>|of at least)"
_BELOW = r"(?:under|below|less than|at most|within|no more than|<=|<|not exceeding)"
_NUMBER = r"(-?\d+(?:\.\d+)?)\s*(%|percent)?"


@dataclass(frozen=True, slots=True)
class Criterion:
    """One condition of a goal: ``metric op threshold`` (drawdown as a magnitude)."""

    metric: str
    op: Op
    threshold: float

    def __str__(self) -> str:
        shown = f"{self.threshold:.0%}" if METRICS[self.metric].percent else f"{self.threshold:g}"
        return f"{self.metric} {self.op} {shown}"


def parse_goal(text: str) -> list[Criterion]:
    """The criteria a goal states, in the order of the metrics it names.

    Each metric is named with a direction and a number: "Sharpe above 1", "drawdown under
    20%", "win rate at least 55%", "annual return over 15%", "at least 10 trades" (the
    number may also come first: "20% max drawdown" reads with the metric's good side).

    Raises:
        InvalidInput: The goal names no metric with a number, saying which it understands.
    """
    lowered = text.lower()
    found: list[tuple[int, Criterion]] = []
    taken: list[tuple[int, int]] = []
    # Longer names first, so "annual return" is not read as "return".
    for metric in sorted(METRICS.values(), key=lambda m: -max(len(w) for w in m.words)):
        names = "|".join(metric.words)
        patterns = (
            rf"(?P<name>{names})\s*(?:is\s+|of\s+|ratio\s+)?(?P<dir>{_ABOVE}|{_BELOW})?\s*{_NUMBER}",
            rf"(?P<dir>{_ABOVE}|{_BELOW})?\s*{_NUMBER}\s*(?P<name>{names})",
        )
        for pattern in patterns:
            match = next(
                (m for m in re.finditer(pattern, lowered) if not _overlaps(m.span(), taken)), None
            )
            if match is None:
                continue
            taken.append(match.span())
            found.append((match.start(), _criterion(metric, match)))
            break
    if not found:
        raise InvalidInput(
            f"the goal {text!r} names no metric with a number; write e.g. "
            "'Sharpe above 1 with drawdown under 20%' (metrics: sharpe, drawdown, win rate, "
            "annual return, return, trades)"
        )
    return [criterion for _, criterion in sorted(found, key=lambda pair: pair[0])]


def _overlaps(span: tuple[int, int], taken: Sequence[tuple[int, int]]) -> bool:
    return any(span[0] < end and start < span[1] for start, end in taken)


def _criterion(metric: _Metric, match: re.Match[str]) -> Criterion:
    groups = [g for g in match.groups()]
    number = float(next(g for g in groups if g is not None and re.fullmatch(r"-?[\d.]+", g)))
    is_percent = "%" in match.group(0) or "percent" in match.group(0)
    if metric.percent and (is_percent or abs(number) > 1):
        number /= 100.0
    if metric.name == "max_drawdown":
        number = abs(number)
    word = match.group("dir")
    op: Op = metric.op
    if word is not None:
        op = ">=" if re.fullmatch(_ABOVE, word) else "<="
    return Criterion(metric.name, op, number)


@dataclass(frozen=True, slots=True)
class CriterionScore:
    """How one metric did against one criterion."""

    criterion: Criterion
    value: float | None
    score: float
    met: bool
    gap: float | None  # how far short of the threshold (0 when met, None without a value)


@dataclass(frozen=True, slots=True)
class FuzzyScore:
    """Every criterion's score; ``overall`` is their mean, ``passed`` when all are met."""

    scores: tuple[CriterionScore, ...]

    @property
    def overall(self) -> float:
        return sum(s.score for s in self.scores) / len(self.scores) if self.scores else 0.0

    @property
    def passed(self) -> bool:
        return bool(self.scores) and all(s.met for s in self.scores)

    @property
    def unmet(self) -> list[CriterionScore]:
        return [s for s in self.scores if not s.met]


def fuzzy_score(value: float | None, criterion: Criterion) -> CriterionScore:
    """Score ``value`` against ``criterion``: 1 when met, linear to 0 over the tolerance.

    A missing or non-finite value (no Sharpe without variation) scores 0 and is not met.
    """
    if value is None or not math.isfinite(value):
        return CriterionScore(criterion, None, 0.0, False, None)
    tolerance = METRICS[criterion.metric].tolerance
    shown = abs(value) if criterion.metric == "max_drawdown" else value
    short = criterion.threshold - shown if criterion.op == ">=" else shown - criterion.threshold
    if short <= 0:
        return CriterionScore(criterion, shown, 1.0, True, 0.0)
    score = max(0.0, 1.0 - short / tolerance)
    return CriterionScore(criterion, shown, round(score, 6), False, short)


def score_metrics(
    metrics: Mapping[str, float | int | None], criteria: Sequence[Criterion]
) -> FuzzyScore:
    """Score a backtest's metrics (names as in ``BacktestMetrics``) against ``criteria``."""
    return FuzzyScore(tuple(fuzzy_score(_number(metrics.get(c.metric)), c) for c in criteria))


def _number(value: float | int | None) -> float | None:
    return None if value is None else float(value)

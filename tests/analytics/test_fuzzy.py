"""Goal parsing, fuzzy scores and trajectory classes against hand-computed cases."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alphadesk.analytics.errors import InsufficientData, InvalidInput
from alphadesk.analytics.fuzzy import Criterion, fuzzy_score, parse_goal, score_metrics
from alphadesk.analytics.trajectory import classify_trajectory


def test_the_issue_goal_parses_into_two_criteria() -> None:
    assert parse_goal("Sharpe above 1 with drawdown under 20%") == [
        Criterion("sharpe", ">=", 1.0),
        Criterion("max_drawdown", "<=", 0.2),
    ]


@pytest.mark.parametrize(
    ("goal", "expected"),
    [
        ("sharpe ratio of at least 1.5", [Criterion("sharpe", ">=", 1.5)]),
        ("max drawdown below 15 percent", [Criterion("max_drawdown", "<=", 0.15)]),
        (
            "win rate over 55% and at least 10 trades",
            [
                Criterion("win_rate", ">=", 0.55),
                Criterion("trades", ">=", 10.0),
            ],
        ),
        (
            "annual return above 12% with sharpe > 0.8",
            [
                Criterion("annualized_return", ">=", 0.12),
                Criterion("sharpe", ">=", 0.8),
            ],
        ),
        (
            "20% max drawdown, Sharpe 1",
            [
                Criterion("max_drawdown", "<=", 0.2),
                Criterion("sharpe", ">=", 1.0),
            ],
        ),
    ],
)
def test_goal_phrasings(goal: str, expected: list[Criterion]) -> None:
    assert parse_goal(goal) == expected


def test_a_goal_without_numbers_says_what_to_write() -> None:
    with pytest.raises(InvalidInput, match="Sharpe above 1"):
        parse_goal("make money")


def test_fuzzy_scores_by_hand() -> None:
    sharpe = Criterion("sharpe", ">=", 1.0)  # tolerance 1.0
    assert fuzzy_score(1.2, sharpe).score == 1.0 and fuzzy_score(1.2, sharpe).met
    assert fuzzy_score(0.75, sharpe).score == pytest.approx(0.75)
    assert fuzzy_score(0.75, sharpe).gap == pytest.approx(0.25)
    assert fuzzy_score(-0.5, sharpe).score == 0.0
    assert fuzzy_score(None, sharpe).score == 0.0 and not fuzzy_score(None, sharpe).met
    drawdown = Criterion("max_drawdown", "<=", 0.2)  # tolerance 0.2, sign ignored
    assert fuzzy_score(-0.25, drawdown).score == pytest.approx(0.75)
    assert fuzzy_score(-0.10, drawdown).met
    assert fuzzy_score(-0.45, drawdown).score == 0.0


def test_overall_is_the_mean_and_pass_needs_every_criterion() -> None:
    criteria = parse_goal("Sharpe above 1 with drawdown under 20%")
    near = score_metrics({"sharpe": 0.8, "max_drawdown": -0.1}, criteria)
    assert near.overall == pytest.approx((0.8 + 1.0) / 2) and not near.passed
    assert [s.criterion.metric for s in near.unmet] == ["sharpe"]
    assert score_metrics({"sharpe": 1.3, "max_drawdown": -0.19}, criteria).passed


@given(st.floats(-5, 5), st.floats(-2, 3))
def test_scores_stay_in_the_unit_interval_and_rise_with_the_value(value: float, t: float) -> None:
    c = Criterion("sharpe", ">=", t)
    low, high = fuzzy_score(value, c).score, fuzzy_score(value + 0.1, c).score
    assert 0.0 <= low <= high <= 1.0


@pytest.mark.parametrize(
    ("scores", "status"),
    [
        ([0.2, 0.3, 0.45], "CONVERGING"),  # slope 0.125
        ([0.6, 0.5, 0.35], "DIVERGING"),  # slope -0.125
        ([0.2, 0.5, 0.2, 0.5], "OSCILLATING"),  # slope 0.06, but two reversals
        ([0.3, 0.6, 0.3], "OSCILLATING"),  # slope 0
        ([0.5, 0.51, 0.5], "STAGNANT"),
        ([0.2, 0.2, 0.2, 0.3], "STAGNANT"),  # slope 0.03, one jump, no reversal
    ],
)
def test_trajectory_classes(scores: list[float], status: str) -> None:
    assert classify_trajectory(scores).status == status


def test_trajectory_figures_by_hand() -> None:
    stats = classify_trajectory([0.2, 0.3, 0.45])
    # slope of (0,.2) (1,.3) (2,.45): cov/var = ((-1)(-.1167)+(1)(.1333))/2 = 0.125
    assert stats.slope == pytest.approx(0.125)
    assert stats.mean_step == pytest.approx(0.125)
    assert stats.best == 0.45 and stats.best_iteration == 3
    assert stats.iterations_to_target == 5  # ceil(0.55 / 0.125)
    assert classify_trajectory([0.3, 0.6, 0.3]).reversals == 1


def test_a_trajectory_needs_two_iterations() -> None:
    with pytest.raises(InsufficientData):
        classify_trajectory([0.4])

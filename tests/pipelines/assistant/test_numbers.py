"""Figures in an answer are traced to the tool results within their rounding, or flagged."""

from __future__ import annotations

from alphadesk.pipelines.assistant.numbers import check_numbers

TOOLS = ['{"price": 250.6857, "vix": 28.34, "pop": 0.8224, "credit_total": 48.7, '
         '"revenue": 1204000000, "max_loss": -177.87, "sma_50": 134.95}']  # fmt: skip


def test_rounded_figures_trace_to_the_tool_values() -> None:
    answer = ("SPY 250.69 (about 250.7, or $251), VIX 28.3, probability of profit 82%, "
              "credit $48.70, revenue $1.2B, a loss of $177.87, 50-day SMA at 134.95.")  # fmt: skip
    check = check_numbers(answer, TOOLS)
    assert check.unverified == [] and check.checked == 10  # "50-day" traces to sma_50


def test_made_up_figures_are_flagged_as_written() -> None:
    check = check_numbers("SPY is at $612.34; VIX 31.2; credit $1,250.", TOOLS)
    assert check.unverified == ["$612.34", "31.2", "$1,250"]


def test_dates_years_times_and_small_counts_are_not_figures() -> None:
    text = "On 2018-12-31 at 16:00, in 2019, sell 2 contracts two expected moves out:\n1. one"
    assert check_numbers(text, []).checked == 0


def test_the_question_counts_as_a_source() -> None:
    assert check_numbers(
        "Yes, a 45-day put.",
        [],
    ).unverified == ["45"]
    assert check_numbers("Yes, a 45-day put.", ["a put 45 days out?"]).ok

"""Money prints with the sign before the dollar sign."""

from __future__ import annotations

import pytest

from alphadesk.money import usd


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (-159.86, "-$159.86"),
        (99_840.14, "$99,840.14"),
        (-13_000_000, "-$13,000,000.00"),
        (0.004, "$0.00"),
        (-0.004, "$0.00"),
        (0.005001, "$0.01"),
    ],
)
def test_usd(value: float, text: str) -> None:
    assert usd(value) == text


def test_signed_marks_gains_and_losses() -> None:
    assert (usd(12, signed=True), usd(-12, signed=True), usd(0, signed=True)) == (
        "+$12.00",
        "-$12.00",
        "$0.00",
    )

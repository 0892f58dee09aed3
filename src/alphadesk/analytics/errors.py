"""Errors raised by the analytics layer.

Every error is a ``ValueError`` (bad or insufficient input) whose message says what was
wrong and how to fix it, so a tool can hand it straight back to a model as a retry.
"""

from __future__ import annotations

__all__ = ["AnalyticsError", "InsufficientData", "InvalidInput", "MissingColumns"]


class AnalyticsError(ValueError):
    """Base class of every analytics error."""


class InsufficientData(AnalyticsError):
    """Too few observations for the computation.

    Attributes:
        what: The computation that needed the data, e.g. ``"RSI(14)"``.
        needed: How many observations it needs at least.
        given: How many it was given.
        unit: What is counted (``"bars"``, ``"swing lows"``, ``"returns"``...).
    """

    def __init__(self, what: str, needed: int, given: int, unit: str = "bars") -> None:
        self.what = what
        self.needed = needed
        self.given = given
        self.unit = unit
        super().__init__(
            f"{what} needs at least {needed} {unit}, but {given} were given; pass a longer history"
        )


class MissingColumns(AnalyticsError):
    """The bars lack columns the computation needs (e.g. a close-only series).

    Attributes:
        what: The computation that needed the columns.
        missing: The missing column names.
    """

    def __init__(self, what: str, missing: list[str], hint: str = "") -> None:
        self.what = what
        self.missing = missing
        msg = f"{what} needs the column(s) {', '.join(missing)}, which the bars do not have"
        super().__init__(f"{msg}; {hint}" if hint else msg)


class InvalidInput(AnalyticsError):
    """Input that is malformed or out of its domain (negative price, naive index...)."""

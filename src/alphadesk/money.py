"""Money for people to read: ``-$159.86``, never ``$-159.86``."""

from __future__ import annotations

__all__ = ["usd"]


def usd(value: float, *, signed: bool = False) -> str:
    """``value`` in dollars to the cent with thousands separators, the sign before the
    dollar sign (``-$1,234.50``); ``signed`` also marks gains (``+$12.00``)."""
    cents = round(value, 2)
    if cents == 0:  # no "-$0.00" for a loss that rounds away
        cents = 0.0
    sign = "-" if cents < 0 else "+" if signed and cents > 0 else ""
    return f"{sign}${abs(cents):,.2f}"

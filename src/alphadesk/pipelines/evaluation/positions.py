"""From decisions to positions, and the cash-secured put's profit and loss: pure functions.

Trading desk: ``BUY`` is long, ``SELL`` flat (short when long/short), ``HOLD`` and a
failed decision keep the position held. The position series then trades through the
backtest engine like any target (ordered at the decision's close, filled at the next
open, with the engine's costs).

Cash-secured put, one contract = 100 shares, held to expiry::

    P&L = 100 × contracts × (premium − max(0, strike − close at expiry)) − fee × contracts

Before expiry an open put is marked at its intrinsic value ``max(0, strike − close)``
(time value ignored), so the equity curve shows the underlying's falls as they happen
and ends each put exactly at its P&L. The premium is credited when the put is sold, the
fee charged then. Expiry settles in cash at the last close on or before the expiration
date. A put is sold only while the capital covers every open put's strike × 100.

A put is struck at the price as it traded when it was sold; the closes it is settled on are
on the evaluation end's basis. A split in between changes the contract as the exchange does
(strike ÷ ratio, deliverable × ratio): :meth:`ShortPut.on_basis` puts it on the closes'
basis, which leaves its collateral and every dollar figure unchanged.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Literal

import numpy as np
import pandas as pd

__all__ = [
    "DeskDecision",
    "PutBook",
    "ShortPut",
    "positions_from_decisions",
    "put_book",
    "short_put_pnl",
]

DeskDecision = Literal["BUY", "HOLD", "SELL", "failed"]
SHARES_PER_CONTRACT = 100


def positions_from_decisions(
    decisions: Sequence[str], *, long_short: bool = False, initial: int = 0
) -> list[int]:
    """The position held after each decision: 1 long, 0 flat, −1 short.

    Raises:
        ValueError: A decision other than BUY, HOLD, SELL or failed.
    """
    held, out = initial, []
    for choice in decisions:
        if choice == "BUY":
            held = 1
        elif choice == "SELL":
            held = -1 if long_short else 0
        elif choice not in ("HOLD", "failed"):
            raise ValueError(f"unknown decision {choice!r}; expected BUY, HOLD, SELL or failed")
        out.append(held)
    return out


@dataclass(frozen=True, slots=True)
class ShortPut:
    """One cash-secured put sold at a decision's close.

    Attributes:
        symbol: The underlying.
        sold_at: The decision instant (the premium is credited at that close).
        expiration: Expiration date.
        strike: Strike price.
        premium: Premium per share received.
        contracts: Contracts sold.
        deliverable: Shares per contract (100, times the ratio of a split after the sale).
    """

    symbol: str
    sold_at: datetime
    expiration: date
    strike: float
    premium: float
    contracts: int = 1
    deliverable: float = SHARES_PER_CONTRACT

    @property
    def shares(self) -> float:
        return self.deliverable * self.contracts

    @property
    def collateral(self) -> float:
        return self.strike * self.shares

    def on_basis(self, ratio: float) -> ShortPut:
        """The same contract after splits of ``ratio`` in all (2.0 for a 2-for-1)."""
        if ratio == 1.0:
            return self
        return replace(
            self,
            strike=self.strike / ratio,
            premium=self.premium / ratio,
            deliverable=self.deliverable * ratio,
        )


def short_put_pnl(put: ShortPut, close_at_expiry: float, fee_per_contract: float = 0.0) -> float:
    """Net P&L of a short put held to expiry (see the module docstring)."""
    intrinsic = max(0.0, put.strike - close_at_expiry)
    gross = (put.premium - intrinsic) * put.shares
    return gross - fee_per_contract * put.contracts


@dataclass(frozen=True)
class PutBook:
    """What a series of puts did on one underlying.

    Attributes:
        equity: Capital plus premiums, minus fees and the open puts' intrinsic value,
            at each close.
        sold: The puts sold, in order.
        skipped: Puts not sold because the capital could not secure them.
        pnls: Net P&L of each put that expired within the window (in ``sold`` order).
        assigned: Puts that expired in the money.
        fees: Fees paid.
        exposure: Per close, whether a put was open.
    """

    equity: pd.Series
    sold: list[ShortPut]
    skipped: list[ShortPut]
    pnls: list[float]
    assigned: int
    fees: float
    exposure: np.ndarray


def put_book(
    puts: Sequence[ShortPut], closes: pd.Series, capital: float, fee_per_contract: float = 0.0
) -> PutBook:
    """Sell ``puts`` in order on the underlying's ``closes`` (a tz-aware close-time index).

    A put sold at a time not in the index counts from the first close at or after it.
    """
    times = closes.index
    values = closes.to_numpy(dtype=np.float64)
    days = [t.date() for t in times]
    equity = np.full(len(values), float(capital))
    exposure = np.zeros(len(values), dtype=bool)
    sold: list[ShortPut] = []
    skipped: list[ShortPut] = []
    pnls: list[float] = []
    open_until: list[tuple[int, int, ShortPut]] = []  # (sold bar, settle bar, put)
    assigned, fees = 0, 0.0
    for put in sorted(puts, key=lambda p: p.sold_at):
        start = int(times.searchsorted(pd.Timestamp(put.sold_at), side="left"))
        if start >= len(values):
            continue
        busy = sum(p.collateral for s, e, p in open_until if s <= start <= e)
        if busy + put.collateral > capital:
            skipped.append(put)
            continue
        # Settles at the last close on or before expiration (or runs to the window's end).
        settle = bisect.bisect_right(days, put.expiration) - 1
        expires = settle < len(values) - 1 or days[-1] >= put.expiration
        settle = max(settle, start)
        fee = fee_per_contract * put.contracts
        credit = put.premium * put.shares - fee
        liability = np.maximum(0.0, put.strike - values) * put.shares
        equity[start:] += credit
        equity[start : settle + 1] -= liability[start : settle + 1]
        equity[settle + 1 :] -= liability[settle]
        exposure[start : settle + 1] = True
        fees += fee
        sold.append(put)
        open_until.append((start, settle, put))
        if expires:
            pnls.append(short_put_pnl(put, float(values[settle]), fee_per_contract))
            assigned += bool(values[settle] < put.strike)
    return PutBook(
        equity=pd.Series(equity, index=times, name="equity"),
        sold=sold,
        skipped=skipped,
        pnls=pnls,
        assigned=assigned,
        fees=fees,
        exposure=exposure,
    )

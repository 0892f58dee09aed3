"""Bars in, orders out: the messages between a strategy (in the sandbox) and the broker.

The broker's side sends bars, one message at a time (the warm-up bars before the first
trading bar together, then one bar per message); the strategy's side answers each with
the orders it placed (and cancelled) while it ran through them. The next bar is sent only
once that answer is in: no later bar exists where the strategy runs before its orders for
the bars it has are final, and the broker outside trades exactly those orders. Messages
are JSON, one per line.
"""

from __future__ import annotations

import json
import math
from typing import Literal

import backtrader as bt
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "MAX_ORDERS_PER_BAR",
    "Cancel",
    "Hello",
    "Op",
    "Placed",
    "StreamError",
    "bar_rows",
    "decode_bars",
    "decode_ops",
    "encode_bars",
    "encode_ops",
]

# More than this in one answer is an error (each costs the broker outside some work).
MAX_ORDERS_PER_BAR = 1000

Row = tuple[float, float, float, float, float, float]  # date number, open, high, low, close, volume


class StreamError(ValueError):
    """A message that breaks the exchange (unreadable, out of turn, an unknown order)."""


class Hello(BaseModel):
    """The strategy's first message: its name and parameters (labels, nothing traded)."""

    model_config = ConfigDict(extra="forbid")

    strategy: str = Field(max_length=200)
    params: dict[str, str | int | float | bool | None]


class Placed(BaseModel):
    """An order as ``BackBroker.buy`` / ``sell`` took it; ``ref`` is the strategy's own
    number for it (``oco`` and ``parent`` name earlier ones)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["order"] = "order"
    ref: int
    side: Literal["buy", "sell"]
    size: float = Field(gt=0, allow_inf_nan=False)
    exectype: int = Field(ge=bt.Order.Market, le=bt.Order.StopTrailLimit)
    price: float | None = Field(default=None, allow_inf_nan=False)
    plimit: float | None = Field(default=None, allow_inf_nan=False)
    trailamount: float | None = Field(default=None, allow_inf_nan=False)
    trailpercent: float | None = Field(default=None, allow_inf_nan=False)
    valid: float | None = Field(default=None, allow_inf_nan=False)
    tradeid: int = 0
    oco: int | None = None
    parent: int | None = None
    transmit: bool = True
    checksubmit: bool = True


class Cancel(BaseModel):
    """The strategy cancelled its order ``ref``."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["cancel"] = "cancel"
    ref: int


Op = Placed | Cancel
_OPS: TypeAdapter[list[Op]] = TypeAdapter(list[Placed | Cancel])
_ROWS: TypeAdapter[list[list[float]]] = TypeAdapter(list[list[float]])


def bar_rows(frame: pd.DataFrame) -> list[Row]:
    """Each bar as Backtrader's date number (of its naive UTC time) and OHLCV."""
    times = frame.index.tz_convert("UTC").tz_localize(None)
    nums = [bt.date2num(t.to_pydatetime()) for t in times]
    columns = [frame[c].to_numpy(dtype=float).tolist() for c in ("open", "high", "low", "close")]
    volume = frame["volume"].to_numpy(dtype=float).tolist()
    return list(zip(nums, *columns, volume, strict=True))


def encode_bars(rows: list[Row]) -> bytes:
    return json.dumps(rows, allow_nan=True).encode() + b"\n"


def decode_bars(line: bytes) -> list[Row]:
    rows = _ROWS.validate_json(line)
    if not rows or any(len(r) != 6 or not math.isfinite(r[0]) for r in rows):
        raise StreamError("a bars message must hold rows of six numbers")
    return [tuple(r) for r in rows]  # type: ignore[misc]


def encode_ops(ops: list[Op]) -> bytes:
    return json.dumps([op.model_dump(exclude_defaults=False) for op in ops]).encode() + b"\n"


def decode_ops(line: bytes) -> list[Op]:
    """The orders of one answer.

    Raises:
        StreamError: Not a list of orders, or more than :data:`MAX_ORDERS_PER_BAR`.
    """
    try:
        ops = _OPS.validate_json(line)
    except ValueError as exc:
        raise StreamError(f"the strategy's answer is not its orders: {exc}") from None
    if len(ops) > MAX_ORDERS_PER_BAR:
        raise StreamError(f"the strategy placed {len(ops)} orders at one bar (at most "
                          f"{MAX_ORDERS_PER_BAR})")  # fmt: skip
    return ops

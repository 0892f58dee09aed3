"""The bars of one chart-tool call, and the rounding every chart output shares."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from alphadesk.agent import ModelRetry, RunContext
from alphadesk.analytics import shared_intermediates
from alphadesk.data.errors import NoData
from alphadesk.kept import Kept
from alphadesk.tools.common import (
    ToolOutput,
    load_daily_bars,
    missing_fields,
    period_start,
    round_price,
    source_of,
    traded_frame,
)
from alphadesk.tools.deps import ToolDeps

if TYPE_CHECKING:
    import pandas as pd

    from alphadesk.analytics import AnalyticsError
    from alphadesk.data.bars import Bars

__all__ = ["ChartSeries", "day", "load_series", "pct", "price"]

logger = logging.getLogger(__name__)

LONGER_PERIOD = {"1mo": "3mo", "3mo": "6mo", "6mo": "1y", "1y": "2y"}

T = TypeVar("T")
# Every agent and validator of a decision reads the same indicators, levels and patterns:
# each is computed once per symbol, instant and bars. Shared by the process, because the
# agents of a decision build their own series and share nothing else; the key holds the
# bars' digest, so a hit is what computing again would give.
_COMPUTED: Kept[Hashable, Any] = Kept(256)
_NOT_YET = object()


@dataclass(frozen=True)
class ChartSeries:
    """Daily bars of one symbol over one period, as the analytics layer takes them.

    Attributes:
        bars: The bars as the provider returned them (provenance, missing fields).
        frame: ``open high low close volume`` where present (see ``traded_frame``).
        period: The period asked for.
        start: First calendar date asked for.
        as_of: The instant the bars were read at.
    """

    bars: Bars
    frame: pd.DataFrame
    period: str
    start: date
    as_of: datetime
    # Swing points, ATR and zones every computation over this frame starts from.
    intermediates: dict[Hashable, Any] = field(default_factory=dict, compare=False, repr=False)

    @cached_property
    def digest(self) -> bytes:
        """A fingerprint of the frame's contents: index, columns and every value."""
        import numpy as np

        index = self.frame.index
        parts = (
            index.asi8.tobytes(),
            str(index.tz).encode(),
            self.frame.to_numpy(dtype=np.float64).tobytes(),
            "|".join(map(str, self.frame.columns)).encode(),
        )
        return hashlib.blake2b(b"\0".join(parts), digest_size=16).digest()

    def computed(self, compute: Callable[..., T], *args: Hashable, **kwargs: Hashable) -> T:
        """``compute(self.frame, *args, **kwargs)``, computed once per symbol, instant and
        bars (the bars are still read, so a read past the instant is still refused); a
        list comes back as a new list, the items (frozen) shared."""
        key = (compute, args, tuple(sorted(kwargs.items())), self.symbol, self.as_of, self.digest)
        value = _COMPUTED.get(key, _NOT_YET)
        if value is _NOT_YET:
            with shared_intermediates(self.intermediates):
                value = compute(self.frame, *args, **kwargs)
            _COMPUTED.put(key, value)
        return list(value) if isinstance(value, list) else value  # type: ignore[return-value]

    @property
    def symbol(self) -> str:
        return self.bars.symbol

    @property
    def close(self) -> float:
        """The last close: the current price at the analysis instant."""
        return float(self.frame["close"].iloc[-1])

    @property
    def basis(self) -> Literal["high_low", "close"]:
        """Whether ranges come from highs and lows or, on a close-only series, closes."""
        return "high_low" if {"high", "low"} <= set(self.frame.columns) else "close"

    @property
    def highs(self) -> pd.Series:
        return self.frame["high"] if "high" in self.frame else self.frame["close"]

    @property
    def lows(self) -> pd.Series:
        return self.frame["low"] if "low" in self.frame else self.frame["close"]

    def envelope(self, ctx: RunContext[ToolDeps], ranges: str, *extra: str) -> dict[str, Any]:
        """The ``ToolOutput`` fields: symbol, as_of, source and what was missing."""
        missing = [*missing_fields(self.bars, ranges=ranges), *extra]
        return {
            "symbol": self.symbol,
            "as_of": ctx.as_of,
            "source": source_of(self.bars.provenance, self.bars.basis),
            "missing": missing,
        }

    def own_notes(self, output: ToolOutput) -> list[str]:
        """The notes of ``output.missing`` past the missing-field notes of the envelope."""
        return output.missing[len(missing_fields(self.bars)) :]

    def not_enough(self, error: AnalyticsError) -> str:
        """A retry asking for a longer period when one would help, else a missing note.

        Raises:
            ModelRetry: A longer period exists and the data reaches back that far.
        """
        longer = LONGER_PERIOD.get(self.period)
        first = self.frame.index[0].date()
        # History that starts well after the period's start: a longer period adds nothing.
        if longer and (first - self.start).days <= 7:
            raise ModelRetry(
                f"not enough data for {self.symbol} over {self.period}: {error}. "
                f"Call again with period={longer!r} or longer."
            )
        return f"not enough data: {error}"


async def load_series(
    ctx: RunContext[ToolDeps], symbol: str, period: str, *, warmup_bars: int = 0
) -> ChartSeries:
    """Load the daily bars of ``period`` at ``ctx.as_of`` (see ``load_daily_bars``)."""
    bars = await load_daily_bars(ctx, symbol, period, warmup_bars=warmup_bars)
    frame = traded_frame(bars)
    if frame.empty:
        raise NoData(
            f"{bars.symbol}: no complete bar in the {period} before {ctx.as_of}",
            provider=bars.provenance.provider,
        )
    start = period_start(ctx.as_of, period, warmup_bars=warmup_bars)
    logger.debug(
        "%s: %d daily bars from %s to %s (%s)",
        bars.symbol,
        len(frame),
        start,
        frame.index[-1].date(),
        bars.provenance.provider,
    )
    return ChartSeries(bars, frame, period, start, ctx.as_of)


def price(value: float) -> float:
    """A price rounded for display (see ``round_price``)."""
    rounded = round_price(value)
    return 0.0 if rounded is None else rounded


def pct(part: float, whole: float) -> float:
    """``part / whole`` in percent, 2 decimals (0 for a zero whole)."""
    return round(100.0 * part / whole, 2) if whole else 0.0


def day(stamp: pd.Timestamp) -> date:
    """The session date of a bar's close time (in the index's own time zone)."""
    return stamp.date()

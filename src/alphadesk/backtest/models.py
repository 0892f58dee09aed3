"""What a backtest takes (costs, sizing, settings) and what it gives back (fills, trades,
the equity curve), shared by both engines so their answers compare field by field."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import pandas as pd

if TYPE_CHECKING:
    from alphadesk.analytics.performance import BacktestMetrics

__all__ = [
    "BacktestConfig",
    "BacktestResult",
    "Costs",
    "Fill",
    "Sizing",
    "Trade",
]

EngineName = Literal["fast", "backtrader"]


def _iso(value: Any) -> Any:
    return value.isoformat() if isinstance(value, pd.Timestamp) else value


@dataclass(frozen=True, slots=True)
class Costs:
    """Trading costs of every fill.

    Attributes:
        commission: Per fill: a fraction of the traded value (``0.001`` = 0.1 %) when
            ``commission_type`` is ``"percent"``, else currency per share.
        commission_type: ``"percent"`` (of value) or ``"per_share"``.
        slippage: Fraction of the price paid on each market fill: buys fill at
            ``open × (1 + slippage)``, sells at ``open × (1 − slippage)``, never outside the
            bar's high–low range.
    """

    commission: float = 0.0
    commission_type: Literal["percent", "per_share"] = "percent"
    slippage: float = 0.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.commission) and self.commission >= 0):
            raise ValueError(f"commission must be >= 0, got {self.commission}")
        if not (math.isfinite(self.slippage) and 0 <= self.slippage < 1):
            raise ValueError(f"slippage must be a fraction in [0, 1), got {self.slippage}")
        if self.commission_type not in ("percent", "per_share"):
            raise ValueError(
                f"commission_type must be 'percent' or 'per_share', got {self.commission_type!r}"
            )


@dataclass(frozen=True, slots=True)
class Sizing:
    """How many shares a new position holds (always a whole number).

    Attributes:
        kind: ``"fraction"``: ``floor(fraction × equity / close)`` at the signal bar's
            close (``fraction=1.0`` is all-in; nothing once equity is at or below zero);
            ``"shares"``: a fixed number of shares.
        fraction: Share of equity for ``"fraction"`` (0 < fraction ≤ 1).
        shares: Shares for ``"shares"``.
    """

    kind: Literal["fraction", "shares"] = "fraction"
    fraction: float = 0.95
    shares: int = 100

    def __post_init__(self) -> None:
        if self.kind == "fraction" and not 0 < self.fraction <= 1:
            raise ValueError(f"fraction must be in (0, 1], got {self.fraction}")
        if self.kind == "shares" and (not isinstance(self.shares, int) or self.shares < 1):
            raise ValueError(f"shares must be a positive integer, got {self.shares!r}")
        if self.kind not in ("fraction", "shares"):
            raise ValueError(f"sizing kind must be 'fraction' or 'shares', got {self.kind!r}")

    @classmethod
    def all_in(cls) -> Sizing:
        """Every unit of equity the close of the signal bar allows."""
        return cls(kind="fraction", fraction=1.0)

    def size(self, equity: float, close: float) -> int:
        """Shares of a new position: the same expression in both engines."""
        if self.kind == "shares":
            return self.shares
        # An account at or below zero opens nothing (and so closes what it holds).
        return max(0, math.floor(self.fraction * equity / close))


@dataclass(frozen=True, slots=True)
class BacktestConfig:
    """Everything about a run except the bars and the signal.

    Attributes:
        cash: Starting cash.
        costs: Commission and slippage.
        sizing: Position sizing.
        long_short: ``False`` (long/flat): a short signal (−1) means flat. ``True``:
            it means short (sale proceeds are credited to cash; no borrow fee).
        periods_per_year: Bars per year for the annualised metrics (252 for daily bars).
    """

    cash: float = 100_000.0
    costs: Costs = field(default_factory=Costs)
    sizing: Sizing = field(default_factory=Sizing)
    long_short: bool = False
    periods_per_year: float = 252

    def __post_init__(self) -> None:
        if not (math.isfinite(self.cash) and self.cash > 0):
            raise ValueError(f"cash must be positive, got {self.cash}")


@dataclass(frozen=True, slots=True)
class Fill:
    """One executed market order (a reversal is one fill that closes and opens).

    Attributes:
        time: Close time of the bar whose open filled it.
        size: Shares, positive bought, negative sold.
        price: Fill price (slippage included).
        commission: Commission paid.
        slippage: What the slip cost against a fill at the open: ``|size| × |price − open|``.
    """

    time: pd.Timestamp
    size: int
    price: float
    commission: float
    slippage: float = 0.0


@dataclass(frozen=True, slots=True)
class Trade:
    """A round trip: a position opened from flat and closed back to flat.

    Attributes:
        size: Shares, positive long, negative short.
        entry_time: Bar of the opening fill.
        entry_price: Opening fill price.
        exit_time: Bar of the closing fill (``None`` while still open at the end).
        exit_price: Closing fill price (``None`` while open).
        pnl: Gross profit and loss (0 while open).
        commission: Commissions of both fills (the opening one only while open).
        pnl_net: ``pnl − commission``.
        bars: Bars from entry to exit.
    """

    size: int
    entry_time: pd.Timestamp
    entry_price: float
    exit_time: pd.Timestamp | None = None
    exit_price: float | None = None
    pnl: float = 0.0
    commission: float = 0.0
    pnl_net: float = 0.0
    bars: int = 0

    @property
    def closed(self) -> bool:
        return self.exit_time is not None


@dataclass(frozen=True)
class BacktestResult:
    """A finished backtest.

    Attributes:
        engine: Which engine ran it (``"fast"`` or ``"backtrader"``).
        config: The settings.
        equity: Account value at each bar's close (cash plus positions at the close).
        position: Shares held at each bar's close.
        fills: Every executed order, in time order.
        trades: Round trips in time order; the last one may still be open.
        symbol: The instrument, when known.
        strategy: Strategy name and parameters, when run from one.
        rejected: Orders the broker refused for want of cash (the signal retries on the
            next bar).
        notes: How the data was prepared (adjustment, close-only series...).
    """

    engine: EngineName
    config: BacktestConfig
    equity: pd.Series
    position: pd.Series
    fills: list[Fill]
    trades: list[Trade]
    symbol: str | None = None
    strategy: dict[str, Any] | None = None
    rejected: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def final_value(self) -> float:
        return float(self.equity.iloc[-1])

    @property
    def closed_trades(self) -> list[Trade]:
        return [t for t in self.trades if t.closed]

    def to_dict(self, *, curve: bool = False) -> dict[str, Any]:
        """A JSON-ready summary: settings, metrics, round trips, notes (and the curve)."""
        out: dict[str, Any] = {
            "engine": self.engine,
            "symbol": self.symbol,
            "strategy": self.strategy,
            "config": asdict(self.config),
            "start": _iso(self.equity.index[0]),
            "end": _iso(self.equity.index[-1]),
            "metrics": {
                k: _iso(v) if isinstance(v, pd.Timestamp) else v
                for k, v in asdict(self.metrics()).items()
            },
            "fills": len(self.fills),
            "rejected_orders": self.rejected,
            "trades": [
                {k: _iso(v) if isinstance(v, pd.Timestamp) else v for k, v in asdict(t).items()}
                for t in self.trades
            ],
            "notes": self.notes,
        }
        if curve:
            out["equity"] = {_iso(k): float(v) for k, v in self.equity.items()}
        return out

    def metrics(self) -> BacktestMetrics:
        """Performance of the run (see :func:`alphadesk.analytics.performance.backtest_metrics`)."""
        # Imported here: the sandbox's runner needs these models, not the analytics.
        from alphadesk.analytics.performance import backtest_metrics

        return backtest_metrics(
            self.equity,
            trade_pnls=[t.pnl_net for t in self.closed_trades],
            traded_value=sum(abs(f.size) * f.price for f in self.fills),
            commission=sum(f.commission for f in self.fills),
            slippage=sum(f.slippage for f in self.fills),
            exposure=self.position.ne(0).to_numpy(),
            periods_per_year=self.config.periods_per_year,
        )

"""Equity-curve and drawdown charts of a backtest, as small PNGs.

Drawn with matplotlib's object API on an Agg canvas (no ``pyplot``, no display), so it
works in threads and servers.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from .models import BacktestResult

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["drawdown_png", "equity_png", "save_charts"]

_SIZE = (8.0, 3.2)
_DPI = 90


def _title(result: BacktestResult, what: str) -> str:
    name = (result.strategy or {}).get("name", "positions")
    symbol = f"{result.symbol} " if result.symbol else ""
    return f"{symbol}{name} ({result.engine}): {what}"


def _draw(draw: object, title: str) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=_SIZE, dpi=_DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    draw(ax)  # type: ignore[operator]
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.tick_params(labelsize=8)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def _naive(series: pd.Series) -> pd.Series:
    index = series.index
    if isinstance(index, pd.DatetimeIndex) and index.tz is not None:
        series = series.set_axis(index.tz_localize(None))
    return series


def equity_png(result: BacktestResult, benchmark: pd.Series | None = None) -> bytes:
    """The account value over time, with buy and sell fills marked.

    Args:
        result: The backtest.
        benchmark: Another equity curve to draw for comparison (e.g. buy and hold).
    """
    equity = _naive(result.equity)

    def draw(ax: Axes) -> None:
        ax.plot(equity.index, equity.to_numpy(), lw=1.2, label="strategy")
        if benchmark is not None:
            other = _naive(benchmark)
            ax.plot(other.index, other.to_numpy(), lw=1.0, alpha=0.7, label="benchmark")
            ax.legend(fontsize=8)
        if result.fills:
            sides = pd.Series(
                [f.size > 0 for f in result.fills],
                index=pd.DatetimeIndex([f.time for f in result.fills]),
            )
            for when, bought in _naive(sides).items():
                ax.axvline(when, color="green" if bought else "red", lw=0.4, alpha=0.4)
        ax.set_ylabel("value", fontsize=8)

    return _draw(draw, _title(result, "equity"))


def drawdown_png(result: BacktestResult) -> bytes:
    """The decline from the running peak, as a shaded area (percent)."""
    equity = _naive(result.equity)
    drawdown = (equity / equity.cummax() - 1.0) * 100

    def draw(ax: Axes) -> None:
        ax.fill_between(drawdown.index, drawdown.to_numpy(), 0.0, color="tab:red", alpha=0.4)
        ax.set_ylabel("drawdown %", fontsize=8)

    return _draw(draw, _title(result, f"drawdown (max {drawdown.min():.1f}%)"))


def save_charts(result: BacktestResult, folder: Path, stem: str | None = None) -> list[Path]:
    """Write ``<stem>_equity.png`` and ``<stem>_drawdown.png`` into ``folder``.

    Returns:
        The two paths.
    """
    folder.mkdir(parents=True, exist_ok=True)
    name = (result.strategy or {}).get("name", "positions")
    stem = stem or "_".join(p for p in (result.symbol, name) if p)
    paths = [folder / f"{stem}_equity.png", folder / f"{stem}_drawdown.png"]
    paths[0].write_bytes(equity_png(result))
    paths[1].write_bytes(drawdown_png(result))
    return paths

"""Annotated candlestick charts: the ``render_chart`` tool and the drawing behind it.

The chart shows the bars with the support and resistance zones, Fibonacci retracements
and support trendline that the level tools report (the same builders compute them), and
goes to a vision model as an image part; the JSON next to it states the drawn numbers.
The drawing (:mod:`.drawing`) uses matplotlib's object API on an Agg canvas (no
``pyplot``), so it works headless, never changes the caller's backend and can run in a
worker thread or in a drawing process.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from alphadesk.agent import ModelRetry, RunContext, ToolReturn, tool
from alphadesk.data.errors import DataError
from alphadesk.data.symbols import normalize_symbol
from alphadesk.llm.messages import ImagePart
from alphadesk.tools.chart.drawing import PNG_SIGNATURE, Annotations, draw_png, render_png
from alphadesk.tools.chart.levels import fib_output, sr_output, trendline_output
from alphadesk.tools.chart.models import ChartImage, FibLevelsOut, TrendlineOut
from alphadesk.tools.chart.series import ChartSeries, load_series, price
from alphadesk.tools.common import Period
from alphadesk.tools.deps import ToolDeps

__all__ = ["PNG_SIGNATURE", "Annotations", "chart_path", "render_chart", "render_png", "save_chart"]

logger = logging.getLogger(__name__)


T = TypeVar("T")
_CHART_LEVELS = 3  # per side: more lines make the picture harder to read, not richer


def _annotations(
    s: ChartSeries,
    sr: list[tuple[float, str]],
    rs: list[tuple[float, str]],
    fib: FibLevelsOut | None,
    line: TrendlineOut | None,
) -> Annotations:
    fibs = [(lv.price, f"fib {lv.label} {lv.price}") for lv in fib.retracements] if fib else []
    trend = None
    if line is not None and line.found and line.start_date is not None:
        dates = [stamp.date() for stamp in s.frame.index]
        start = dates.index(line.start_date)
        assert line.start_price is not None and line.value_now is not None
        trend = ((start, line.start_price), (len(dates) - 1, line.value_now))
    return Annotations(supports=sr, resistances=rs, fib=fibs, trendline=trend)


def _draw_and_save(s: ChartSeries, notes: Annotations, path: Path | None) -> bytes:
    title = f"{s.symbol} daily, {s.period} to {s.frame.index[-1].date()}"
    if s.bars.basis:
        title += f"\nprices {s.bars.basis}"
    png = draw_png(s.frame, title=title, annotations=notes)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(png)
    return png


def _optional(build: Callable[[], T], wanted: bool, what: str, skipped: list[str]) -> T | None:
    """An annotation layer, or None with a note when it cannot be computed: a chart without
    it still helps, where a level tool would rather ask for a longer period."""
    if not wanted:
        return None
    try:
        return build()
    except ModelRetry as exc:
        skipped.append(f"{what} not drawn: {exc}")
        return None


@tool
async def render_chart(
    ctx: RunContext[ToolDeps],
    symbol: str,
    period: Period = "6mo",
    show_levels: bool = True,
    show_fib: bool = True,
    show_trendline: bool = True,
) -> ToolReturn:
    """Render a daily candlestick chart with volume as an image, for visual confirmation.

    Draws the nearest support (green) and resistance (red) zones, the Fibonacci
    retracements of the most significant swing (purple, dotted) and the support trendline
    (blue). The text result lists the drawn prices: quote numbers from it, not from the
    picture.

    Args:
        symbol: Ticker, e.g. "MSFT".
        period: How much history to draw.
        show_levels: Draw support and resistance zones.
        show_fib: Draw Fibonacci retracement levels.
        show_trendline: Draw the support trendline.
    """
    summary, png = await _chart(ctx, symbol, period, (show_levels, show_fib, show_trendline))
    return ToolReturn(summary, images=[ImagePart(data=png, media_type="image/png")])


def chart_path(run_dir: Path, symbol: str) -> Path:
    """Where a run keeps the chart of ``symbol`` (``render_chart`` saves it there too)."""
    return run_dir / f"chart_{symbol}.png"


async def save_chart(
    deps: ToolDeps, symbol: str, as_of: datetime, *, period: Period = "6mo"
) -> Path | None:
    """The chart ``render_chart`` draws, saved in ``deps.run_dir`` for a run's report.

    For a chart nobody asked a model to look at: drawn once, at the end of a run. A chart
    already saved by the tool during the run is kept as it is.

    Returns:
        The PNG's path; None when there is no run folder or no bars to draw.
    """
    if deps.run_dir is None:
        return None
    path = chart_path(deps.run_dir, normalize_symbol(symbol))
    if path.is_file():
        return path
    ctx = RunContext(deps=deps, as_of=as_of, run_id="report", agent="report")
    try:
        await _chart(ctx, symbol, period, (True, True, True))
    except (DataError, ModelRetry) as exc:
        logger.info("no chart for %s at %s: %s", symbol, as_of.date(), exc)
        return None
    return path


async def _chart(
    ctx: RunContext[ToolDeps], symbol: str, period: Period, show: tuple[bool, bool, bool]
) -> tuple[ChartImage, bytes]:
    """Draw (and save in the run folder) the chart; its summary and the PNG's bytes."""
    s = await load_series(ctx, symbol, period)
    if len(s.frame) < 2:
        raise ModelRetry(f"{s.symbol} has a single bar in {period}; ask for a longer period")
    show_levels, show_fib, show_trendline = show
    skipped: list[str] = []
    sr = _optional(lambda: sr_output(ctx, s, _CHART_LEVELS), show_levels, "levels", skipped)
    fib = _optional(lambda: fib_output(ctx, s), show_fib, "fib", skipped)
    line = _optional(
        lambda: trendline_output(ctx, s, "support", 5), show_trendline, "trendline", skipped
    )
    supports = [(z.price, f"S {z.price} ({z.strength})") for z in (sr.support if sr else [])]
    resists = [(z.price, f"R {z.price} ({z.strength})") for z in (sr.resistance if sr else [])]
    notes = _annotations(s, supports, resists, fib, line)
    run_dir = ctx.deps.run_dir
    path = chart_path(run_dir, s.symbol) if run_dir is not None else None
    png = await asyncio.to_thread(_draw_and_save, s, notes, path)
    missing = [m for part in (sr, line) if part is not None for m in s.own_notes(part)]
    summary = ChartImage(
        **s.envelope(ctx, "a line of closes is drawn"),
        period=period,
        bars=len(s.frame),
        current_price=price(s.close),
        file=path.name if path is not None else None,
        support_levels=[p for p, _ in supports],
        resistance_levels=[p for p, _ in resists],
        fib_levels={lv.label: lv.price for lv in fib.retracements} if fib else {},
        trendline={"start_price": line.start_price, "value_now": line.value_now}
        if line is not None
        and line.found
        and line.start_price is not None
        and line.value_now is not None
        else None,
    )
    summary.missing.extend([*missing, *skipped])
    return summary, png

"""Drawing the annotated candlestick chart, in this process or in a drawing process.

Importing matplotlib and mplfinance and drawing costs about half a second of CPU. A command
line run that will want its report's chart starts a drawing process first
(:func:`start_drawing_process`): that process imports them on the other core while the run
works, then draws each chart it is sent. Without one (a server, a test), or when the
drawing process fails or does not answer in time, the chart is drawn here as before:
the picture is the same either way.

This module imports nothing of alphadesk: the drawing process runs it as a script
(``python -P drawing.py``) without loading the package.
"""

from __future__ import annotations

import atexit
import io
import logging
import os
import pickle
import struct
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import astuple, dataclass
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "PNG_SIGNATURE",
    "Annotations",
    "draw_png",
    "render_png",
    "start_drawing_process",
    "stop_drawing_process",
]

logger = logging.getLogger(__name__)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# mplfinance applies styles through matplotlib's global rcParams: one drawing at a time.
_LOCK = threading.Lock()
_COLORS = {"support": "#1a9850", "resistance": "#d73027", "fib": "#7b3294", "trend": "#2166ac"}
# How long a drawing may take in the drawing process (its imports included, on a busy
# machine) before the chart is drawn here instead.
_WAIT_SECONDS = 60.0
_HEADER = struct.Struct("!Q")  # each message: its length, then its bytes


@dataclass(frozen=True)
class Annotations:
    """What to draw over the price bars.

    Attributes:
        supports: ``(price, label)`` of support levels.
        resistances: ``(price, label)`` of resistance levels.
        fib: ``(price, label)`` of Fibonacci levels.
        trendline: Two ``(bar position, price)`` points of a trendline, or None.
    """

    supports: Sequence[tuple[float, str]] = ()
    resistances: Sequence[tuple[float, str]] = ()
    fib: Sequence[tuple[float, str]] = ()
    trendline: tuple[tuple[int, float], tuple[int, float]] | None = None


def render_png(
    frame: pd.DataFrame,
    *,
    title: str,
    annotations: Annotations,
    width: float = 11.0,
    height: float = 6.5,
    dpi: int = 100,
) -> bytes:
    """Draw the bars (candles, or a line for a close-only series) and the annotations.

    Args:
        frame: Bars with a DatetimeIndex and ``close`` (plus ``open high low`` for candles
            and ``volume`` for a volume panel).
        title: Chart title.
        annotations: Levels and the trendline to draw.
        width: Figure width in inches.
        height: Figure height in inches.
        dpi: Resolution.

    Returns:
        The PNG file's bytes.
    """
    import mplfinance as mpf
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    ohlc = all(c in frame.columns for c in ("open", "high", "low"))
    data = (
        frame
        if ohlc
        else frame.assign(open=frame["close"], high=frame["close"], low=frame["close"])
    )
    with _LOCK:
        fig = Figure(figsize=(width, height), dpi=dpi)
        FigureCanvasAgg(fig)
        has_volume = "volume" in frame.columns
        ax = fig.add_axes((0.06, 0.34 if has_volume else 0.12, 0.86, 0.58 if has_volume else 0.80))
        vax = fig.add_axes((0.06, 0.12, 0.86, 0.18), sharex=ax) if has_volume else False
        mpf.plot(
            data,
            type="candle" if ohlc else "line",
            ax=ax,
            volume=vax,
            style="yahoo",
            warn_too_much_data=10_000,
        )
        if has_volume:
            ax.tick_params(labelbottom=False)  # the volume panel carries the dates
        _draw(ax, len(data), annotations)
        ax.set_title(title, fontsize=11, loc="left")
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")
    png = buffer.getvalue()
    logger.debug("rendered %s: %d bars, %d bytes", title, len(frame), len(png))
    return png


def _draw(ax: object, bars: int, notes: Annotations) -> None:
    """Horizontal levels with labels at the right edge, and the trendline."""
    from matplotlib.axes import Axes

    assert isinstance(ax, Axes)
    # A gutter right of the last bar holds the level labels, clear of the candles.
    ax.set_xlim(-1, bars + max(10, bars // 5))
    right = bars + 0.5
    groups = (
        ("support", notes.supports, "--"),
        ("resistance", notes.resistances, "--"),
        ("fib", notes.fib, ":"),
    )
    for kind, levels, style in groups:
        for level, label in levels:
            ax.axhline(level, color=_COLORS[kind], linestyle=style, linewidth=1.0, alpha=0.85)
            ax.annotate(
                label,
                xy=(right, level),
                xytext=(0, 1.5),
                textcoords="offset points",
                va="bottom",
                fontsize=7,
                color=_COLORS[kind],
            )
    if notes.trendline is not None:
        (x0, y0), (x1, y1) = notes.trendline
        ax.plot([x0, x1], [y0, y1], color=_COLORS["trend"], linewidth=1.4)


# -- the drawing process ----------------------------------------------------------------


def _send(stream: IO[bytes], payload: bytes) -> None:
    stream.write(_HEADER.pack(len(payload)) + payload)
    stream.flush()


def _receive(stream: IO[bytes]) -> bytes | None:
    """The next message, or None at the end of the stream."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    payload = stream.read(size)
    if len(payload) < size:
        return None
    return payload


class _DrawingProcess:
    """A child Python that has imported the drawing libraries and draws what it is sent;
    one drawing at a time. It ends when this process closes its input (at exit)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._child: subprocess.Popen[bytes] | None = None
        atexit.register(self.stop)

    def start(self) -> None:
        with self._lock:
            if self._child is None or self._child.poll() is not None:
                try:
                    self._child = subprocess.Popen(
                        [sys.executable, "-P", __file__],
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL,
                    )
                except OSError as exc:  # charts are then drawn in this process
                    logger.info("no drawing process (%s): charts are drawn here", exc)
                    self._child = None

    def stop(self) -> None:
        child, self._child = self._child, None
        if child is not None and child.poll() is None:
            assert child.stdin is not None
            child.stdin.close()  # the child reads the end of its input and exits
            try:
                child.wait(timeout=5)
            except subprocess.TimeoutExpired:
                child.kill()

    def draw(self, frame: pd.DataFrame, title: str, notes: Annotations) -> bytes | None:
        """The PNG drawn by the drawing process; None when none runs, when it could not
        draw this chart, or when it did not answer (it is then stopped): the caller draws
        the chart itself."""
        with self._lock:
            child = self._child
            if child is None or child.poll() is not None:
                return None
            assert child.stdin is not None and child.stdout is not None
            timer = threading.Timer(_WAIT_SECONDS, child.kill)  # a bounded wait
            timer.start()
            try:
                _send(child.stdin, pickle.dumps((frame, title, astuple(notes))))
                png = _receive(child.stdout)
            except OSError:
                png = None
            finally:
                timer.cancel()
            if png is None:  # no answer: it crashed or was stopped for taking too long
                logger.warning(
                    "the drawing process did not answer for %r (it failed or took over "
                    "%.0f s); drawing the chart in this process",
                    title.splitlines()[0],
                    _WAIT_SECONDS,
                )
                child.kill()
                self._child = None
            return png or None  # empty: it could not draw this one (drawn here, it says why)


_PROCESS = _DrawingProcess()  # this process's drawing process, once started


def start_drawing_process() -> None:
    """Start the drawing process (if not running): it imports the drawing libraries while
    this process goes on, and :func:`draw_png` sends it the charts to draw. Not on a
    single core, where it would only add its own imports to the run's work."""
    if _cores() > 1:
        _PROCESS.start()


def _cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def stop_drawing_process() -> None:
    """Stop the drawing process (done at exit); later charts are drawn here until another
    is started."""
    _PROCESS.stop()


def draw_png(frame: pd.DataFrame, *, title: str, annotations: Annotations) -> bytes:
    """The chart's PNG: drawn by the drawing process when one was started, else (or when it
    fails) here, with :func:`render_png`'s default size."""
    png = _PROCESS.draw(frame, title, annotations)
    if png is None:
        png = render_png(frame, title=title, annotations=annotations)
    return png


def _serve() -> None:
    """The drawing process: import the libraries, then draw each chart sent on stdin and
    answer its PNG on stdout (an empty answer when it could not be drawn)."""
    import gc

    gc.set_threshold(50_000, 20, 20)  # its imports: see the command line's main
    import mplfinance  # noqa: F401
    import pandas  # noqa: F401  (the frames arrive pickled)
    from matplotlib.backends import backend_agg  # noqa: F401

    source, sink = sys.stdin.buffer, sys.stdout.buffer
    while (job := _receive(source)) is not None:
        try:
            frame, title, notes = pickle.loads(job)
            png = render_png(frame, title=title, annotations=Annotations(*notes))
        except Exception:
            logger.exception("could not draw a chart")
            png = b""
        _send(sink, png)
    gc.freeze()  # the run waits for this process to exit: no collection at exit


if __name__ == "__main__":
    _serve()

"""The chart drawn by a drawing process: the same picture as drawn here, and drawn here
when that process fails or does not answer."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import pandas as pd
import pytest

from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.tools.chart import drawing
from alphadesk.tools.chart.drawing import (
    PNG_SIGNATURE,
    Annotations,
    draw_png,
    render_png,
    start_drawing_process,
    stop_drawing_process,
)

pytestmark = pytest.mark.slow  # each test starts a Python that imports matplotlib

NOTES = Annotations(
    supports=[(180.0, "S 180.0 (3)")],
    resistances=[(215.5, "R 215.5 (2)")],
    fib=[(195.25, "fib 0.5 195.25")],
    trendline=((3, 170.0), (120, 190.0)),
)


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    as_of = datetime(2024, 6, 28, 20, tzinfo=UTC)
    return BundledProvider().daily_bars("AAPL", as_of, start=date(2023, 12, 28)).frame


@pytest.fixture
def drawing_process() -> Iterator[None]:
    start_drawing_process()
    yield
    stop_drawing_process()


@pytest.mark.usefixtures("drawing_process")
def test_the_drawing_process_draws_the_same_picture(frame: pd.DataFrame) -> None:
    here = render_png(frame, title="AAPL daily", annotations=NOTES)
    apart = draw_png(frame, title="AAPL daily", annotations=NOTES)
    assert apart.startswith(PNG_SIGNATURE) and len(apart) > 10_000
    assert apart == here
    # it serves several charts, the line of a close-only series too
    closes = frame[["close"]]
    assert draw_png(closes, title="closes", annotations=Annotations()) == render_png(
        closes, title="closes", annotations=Annotations()
    )


@pytest.mark.usefixtures("drawing_process")
def test_a_drawing_process_that_does_not_answer_in_time_leaves_the_chart_to_this_one(
    frame: pd.DataFrame, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(drawing, "_WAIT_SECONDS", 0.0)  # it is stopped at once
    with caplog.at_level(logging.WARNING, logger=drawing.__name__):
        png = draw_png(frame, title="AAPL daily", annotations=NOTES)
    assert png == render_png(frame, title="AAPL daily", annotations=NOTES)
    assert "drawing the chart in this process" in caplog.text


@pytest.mark.usefixtures("drawing_process")
def test_a_chart_the_drawing_process_cannot_draw_fails_as_it_would_here(
    frame: pd.DataFrame,
) -> None:
    """A frame without closes cannot be drawn anywhere: the error is this process's own,
    as without a drawing process, and the drawing process goes on serving."""
    with pytest.raises(ValueError, match="NOT FOUND"):
        draw_png(frame.drop(columns="close"), title="no closes", annotations=NOTES)
    assert draw_png(frame, title="AAPL", annotations=NOTES) == render_png(
        frame, title="AAPL", annotations=NOTES
    )
    assert drawing._PROCESS._child is not None and drawing._PROCESS._child.poll() is None


def test_without_a_drawing_process_the_chart_is_drawn_here(
    frame: pd.DataFrame, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A Python that cannot be started (an embedded interpreter, a removed venv) leaves
    the drawing to this process; the command does not fail for it."""
    monkeypatch.setattr(drawing.sys, "executable", str(tmp_path / "no-python"))
    start_drawing_process()
    assert drawing._PROCESS._child is None
    png = draw_png(frame, title="AAPL daily", annotations=NOTES)
    assert png == render_png(frame, title="AAPL daily", annotations=NOTES)

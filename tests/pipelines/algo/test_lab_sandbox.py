"""A cancelled lab run stops its variants' sandboxed backtests at once, not at their own
limits."""

from __future__ import annotations

import asyncio
import tempfile
from datetime import date
from pathlib import Path

import pytest

from alphadesk.backtest.frame import frame_from_bars
from alphadesk.backtest.models import BacktestConfig
from alphadesk.data.calendar import session_close
from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.pipelines.algo.backtests import backtest_variant
from tests.support.processes import FOREVER, alive, sandbox_tree

pytestmark = pytest.mark.slow


@pytest.mark.usefixtures("sandbox")
async def test_a_cancelled_variant_backtest_kills_its_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the job folder: found by it
    bars = BundledProvider().daily_bars("KO", session_close(date(2022, 6, 30)))
    frame, _ = frame_from_bars(bars)
    run = asyncio.create_task(backtest_variant(FOREVER, frame, date(2022, 1, 3), BacktestConfig()))
    for _ in range(600):
        if len(running := sandbox_tree(str(tmp_path))) >= 2:
            break
        await asyncio.sleep(0.1)
    assert len(running) >= 2, "the sandbox never started"

    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    for _ in range(60):
        if not any(alive(pid) for pid in running):
            break
        await asyncio.sleep(0.05)
    assert not any(alive(pid) for pid in running), "the sandbox outlived the cancel by 3 s"

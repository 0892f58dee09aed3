"""An analyst's report reused while what it read is unchanged: over consecutive days the
desk that reuses decides exactly as the full desk, every reused report is the report the
full desk wrote that day, and an analyst whose data moved is asked again."""

from __future__ import annotations

from pathlib import Path

import pytest

from alphadesk.config import MemorySettings, Settings
from alphadesk.data import build_provider
from alphadesk.pipelines.base import PipelineRun, run_graph
from alphadesk.pipelines.desk.models import DeskRequest, DeskResult
from alphadesk.pipelines.desk.pipeline import TradingDesk
from alphadesk.pipelines.desk.reuse import AnalystReports
from tests.pipelines.conftest import close_of

DAYS = ("2025-03-03", "2025-03-04", "2025-03-05")
ANALYSTS = ("market", "sentiment", "news", "fundamentals")


async def _decide(desk: TradingDesk, symbol: str, day: str) -> DeskResult:
    request = DeskRequest(symbol=symbol, as_of=close_of(day), memory=False)
    result = await run_graph(desk, request, PipelineRun(run_id=f"{symbol}-{day}"))
    assert result is not None
    return result


@pytest.mark.parametrize("symbol", ["JPM", "AAPL"])
async def test_reused_reports_decide_as_the_full_desk(tmp_path: Path, symbol: str) -> None:
    settings = Settings(data_dir=tmp_path, memory=MemorySettings(enabled=False))
    market = build_provider(settings)
    reports = AnalystReports()
    full, reusing = TradingDesk(settings, market), TradingDesk(settings, market, reports=reports)
    reused: set[str] = set()
    for day in DAYS:
        whole, kept = await _decide(full, symbol, day), await _decide(reusing, symbol, day)
        assert kept.decision == whole.decision and kept.decision != "failed"
        assert kept.final == whole.final and kept.facts == whole.facts
        for name in ANALYSTS:
            assert getattr(kept, name) == getattr(whole, name), (day, name)
        reused |= {a.agent for a in kept.agents if a.outcome == "reused"}
    # Offline nothing the sentiment analyst reads moves; the bars the market analyst
    # reads move every session.
    assert "sentiment" in reused and "market" not in reused
    assert reports.reused >= 2 and reports.asked >= len(ANALYSTS) + 2 * 1


async def test_the_same_inputs_reuse_every_report_and_another_symbol_none(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, memory=MemorySettings(enabled=False))
    market = build_provider(settings)
    reports = AnalystReports()
    desk = TradingDesk(settings, market, reports=reports)
    await _decide(desk, "JPM", DAYS[0])
    # The same day again: every input the same, nothing asked of any analyst's model.
    again = await _decide(desk, "JPM", DAYS[0])
    assert {a.agent for a in again.agents if a.outcome == "reused"} == set(ANALYSTS)
    # Another symbol: nothing of JPM's is taken for it.
    other = await _decide(desk, "PG", DAYS[0])
    assert not [a for a in other.agents if a.outcome == "reused"]

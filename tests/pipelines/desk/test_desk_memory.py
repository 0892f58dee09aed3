"""Memory of past situations: a reflection written after a backtested decision's horizon
is recalled for a later similar situation, never for a date before it was written, and
shapes what the trader and the judge do."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from alphadesk.config import CacheMode, MemorySettings, Settings
from alphadesk.data.base import MarketData
from alphadesk.memory import SituationMemory
from alphadesk.pipelines.desk.memory import open_memory
from alphadesk.pipelines.desk.models import DeskRequest, DeskResult
from alphadesk.pipelines.desk.pipeline import TradingDesk
from alphadesk.pipelines.runner import PipelineRunner
from alphadesk.store import RunStore
from tests.pipelines.conftest import close_of
from tests.pipelines.desk.conftest import FakeMemory

pytestmark = pytest.mark.slow

SYMBOL = "AAPL"


async def run_at(
    runner: PipelineRunner[Any, Any], day: str, events: list[Any], **fields: Any
) -> DeskResult:
    request = DeskRequest(
        symbol=SYMBOL, as_of=close_of(day), analysts=["market", "sentiment"], **fields
    )
    result = await runner.analyze(request)
    assert result is not None and result.decision != "failed", result.reason
    return result


async def test_a_reflection_is_recalled_later_and_never_before_it_was_written(
    settings: Settings, market: MarketData
) -> None:
    memory = FakeMemory()
    events: list[Any] = []
    runner = PipelineRunner(
        settings, TradingDesk(settings, market, memory=memory), on_event=events.append
    )
    store = RunStore(settings.store_path)

    decided = await run_at(runner, "2012-03-30", events)
    assert decided.decision == "BUY" and decided.final is not None
    horizon_end = close_of("2012-03-30") + timedelta(days=decided.final.horizon_days)

    early = await run_at(runner, "2012-04-09", events)  # inside the horizon: nothing to learn
    assert memory.items == [] and early.memories == []

    events.clear()
    later = await run_at(runner, "2012-04-20", events)
    (item,) = memory.items
    assert item.run_id == decided.run_id and item.symbol == SYMBOL
    assert item.decided_at == close_of("2012-03-30") and item.written_at == close_of("2012-04-20")
    assert item.situation == decided.situation and SYMBOL not in item.situation
    # The outcome is what the bars known on 2012-04-20 say about the horizon.
    bars = market.daily_bars(SYMBOL, close_of("2012-04-20"), start=close_of("2012-03-01").date())
    closes = bars.prices()
    start = float(closes[closes.index <= close_of("2012-03-30")].iloc[-1])
    end = float(closes[closes.index <= horizon_end].iloc[-1])
    assert item.outcome["return_pct"] == pytest.approx((end / start - 1) * 100, abs=0.01)
    assert item.outcome["correct"] == (end > start)
    assert item.lesson.startswith("BUY was right" if end > start else "BUY was wrong")
    written = [e for e in events if e.kind == "reflection_written"]
    assert [(e.decision_run, e.run_id) for e in written] == [(decided.run_id, later.run_id)]
    marks = [e for e in store.events(decided.run_id) if e["kind"] == "reflection_written"]
    assert len(marks) == 1  # recorded on the decision's own run, so it is written once
    # Recalled for the similar situation of the same day, and shown in the report.
    assert [m.id for m in later.memories] == [item.id]
    assert later.memories[0].lesson == item.lesson
    assert "## Similar past situations" in runner.pipeline.report(later)

    between = await run_at(runner, "2012-04-16", events)  # after the horizon, before writing
    assert between.memories == []
    afterwards = await run_at(runner, "2012-05-15", events)
    assert item.id in [m.id for m in afterwards.memories]
    assert sum(i.run_id == decided.run_id for i in memory.items) == 1


async def test_a_recalled_loss_shrinks_the_position(settings: Settings, market: MarketData) -> None:
    runner = PipelineRunner(settings, TradingDesk(settings, market, memory=FakeMemory()))
    plain = await run_at(runner, "2012-03-30", [], memory=False)
    assert plain.final is not None and plain.proposal is not None and plain.memories == []

    memory = FakeMemory()
    memory.remember(
        symbol=SYMBOL,
        situation=plain.situation or "",
        lesson="BUY was wrong: the stock moved -9.0% in 14 days.",
        outcome={"action": "BUY", "return_pct": -9.0, "correct": False},
        decided_at=close_of("2011-09-30"),
        written_at=close_of("2011-10-20"),
    )
    remembering = PipelineRunner(settings, TradingDesk(settings, market, memory=memory))
    warned = await run_at(remembering, "2012-03-30", [])
    assert warned.memories and warned.memories[0].distance == pytest.approx(0.0, abs=1e-6)
    assert warned.proposal is not None and warned.final is not None
    # the trader sizes in proportion to the plan's confidence (which the bear's lesson
    # moves a little), then halves the size for the recalled loss
    assert warned.plan is not None and plain.plan is not None
    confidence = warned.plan.confidence / plain.plan.confidence
    assert warned.proposal.size_fraction == pytest.approx(
        plain.proposal.size_fraction / 2 * confidence, abs=0.01
    )
    assert "size halved" in warned.proposal.rationale
    assert any(note.startswith("memory:") for note in warned.final.risk_notes)
    bear = next(e.turn for e in warned.debate if e.speaker == "bear")
    assert "-9.0% move" in bear.argument  # the bear used the lesson; the bull had none
    assert warned.final.size_fraction < plain.final.size_fraction


async def test_memory_off_recalls_and_writes_nothing(
    settings: Settings, market: MarketData
) -> None:
    memory = FakeMemory()
    memory.remember(
        symbol=SYMBOL,
        situation="market: bullish",
        lesson="x",
        outcome={},
        decided_at=close_of("2011-01-31"),
        written_at=close_of("2011-02-28"),
    )
    events: list[Any] = []
    runner = PipelineRunner(
        settings, TradingDesk(settings, market, memory=memory), on_event=events.append
    )
    result = await run_at(runner, "2012-03-30", events, memory=False)
    assert result.memories == [] and len(memory.items) == 1
    assert not any(e.kind == "reflection_written" for e in events)
    off = settings.model_copy(update={"memory": MemorySettings(enabled=False)})
    assert open_memory(off) is None and isinstance(open_memory(settings), SituationMemory)


async def test_a_replay_writes_no_lesson(settings: Settings, market: MarketData) -> None:
    memory = FakeMemory()
    runner = PipelineRunner(settings, TradingDesk(settings, market, memory=memory))
    await run_at(runner, "2012-03-30", [])
    replaying = settings.model_copy(update={"cache": CacheMode.REPLAY})
    again = PipelineRunner(replaying, TradingDesk(replaying, market, memory=memory))
    await run_at(again, "2012-04-20", [])
    assert memory.items == []  # a replay repeats a run; it writes nothing new
    await run_at(runner, "2012-04-20", [])
    assert len(memory.items) == 1


async def test_the_real_vector_memory_recalls_a_lesson_only_after_it_was_written(
    settings: Settings, market: MarketData
) -> None:
    """The same point-in-time rule on the persistent ChromaDB store the settings open."""
    runner = PipelineRunner(settings, TradingDesk(settings, market))
    decided = await run_at(runner, "2012-03-30", [])
    later = await run_at(runner, "2012-04-20", [])  # past the horizon: reflects, then recalls
    (recalled,) = later.memories
    assert recalled.decided_at == close_of("2012-03-30")
    assert recalled.written_at == close_of("2012-04-20") and recalled.symbol == SYMBOL
    assert recalled.situation == decided.situation and recalled.distance < 0.2
    between = await run_at(runner, "2012-04-16", [])  # before the lesson was written
    assert between.memories == []
    assert SituationMemory(settings.memory_path).count(SYMBOL) == 1  # on disk, written once

"""Reflection: looking back on past decisions once their horizon has passed.

At the start of a run at ``as_of`` the desk finds its earlier decisions whose horizon
ended by then and that nobody reflected on yet, measures what the stock did over the
horizon from bars known at ``as_of`` (point in time: nothing later is read), and stores
the situation, the outcome and a lesson in memory with ``written_at = as_of``. Recall at
an earlier instant never sees it. Each decision's own run records the reflection, so it
is written once.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pandas as pd

from alphadesk.agents.desk.lessons import MOVE_THRESHOLD
from alphadesk.data.base import MarketData
from alphadesk.data.errors import DataError
from alphadesk.pipelines.desk.memory import DeskMemory
from alphadesk.pipelines.events import ReflectionWritten
from alphadesk.store import RunRecord, RunStore
from alphadesk.tools.common import traded_frame

__all__ = ["Decided", "lesson_of", "reflect", "reflect_one", "trade_outcome"]

logger = logging.getLogger(__name__)

_SCAN = 500  # the latest desk runs looked at
_AT_ONCE = 20  # decisions reflected on in one run, oldest first


@dataclass(frozen=True)
class Decided:
    """A desk run's final decision, as reflection reads it from the run store."""

    run_id: str
    symbol: str
    decided_at: datetime
    situation: str
    final: dict[str, Any]

    @property
    def horizon_end(self) -> datetime:
        return self.decided_at + timedelta(days=int(self.final["horizon_days"]))

    @classmethod
    def of_run(cls, run: RunRecord) -> Decided | None:
        """The run's decision; None for a run without a final decision or a situation."""
        result = run.result or {}
        if not result.get("final") or not result.get("situation"):
            return None
        return cls(
            run_id=run.id,
            symbol=result["symbol"],
            decided_at=datetime.fromisoformat(result["as_of"]),
            situation=result["situation"],
            final=result["final"],
        )


def trade_outcome(
    frame: pd.DataFrame, decided_at: datetime, horizon_end: datetime, final: dict[str, Any]
) -> dict[str, Any] | None:
    """What the stock did between the decision and the end of its horizon, and whether the
    decision was right; None when the bars do not cover the horizon."""
    before = frame[frame.index <= decided_at]
    window = frame[(frame.index > decided_at) & (frame.index <= horizon_end)]
    if before.empty or window.empty:
        return None
    start, end = float(before["close"].iloc[-1]), float(window["close"].iloc[-1])
    high = float((window["high"] if "high" in window else window["close"]).max())
    low = float((window["low"] if "low" in window else window["close"]).min())
    move = (end / start - 1.0) * 100.0
    action = final["action"]
    sign = {"BUY": 1, "SELL": -1}.get(action, 0)
    stop, target = final.get("stop"), final.get("target")
    correct = sign * move > 0 if sign else abs(move) < MOVE_THRESHOLD
    return {
        "action": action,
        "size_fraction": final.get("size_fraction", 0.0),
        "start_price": round(start, 4),
        "end_price": round(end, 4),
        "return_pct": round(move, 2),
        "position_return_pct": round(sign * move, 2),
        "max_gain_pct": round((high / start - 1.0) * 100.0, 2),
        "max_loss_pct": round((low / start - 1.0) * 100.0, 2),
        "stop_hit": stop is not None and (low <= stop if sign > 0 else high >= stop),
        "target_hit": target is not None and (high >= target if sign > 0 else low <= target),
        "correct": bool(correct),
        "horizon_end": horizon_end.date().isoformat(),
    }


def lesson_of(outcome: dict[str, Any], horizon_days: int) -> str:
    """The lesson of an outcome, in words (computed, so it says only what happened)."""
    action, move = outcome["action"], outcome["return_pct"]
    what = f"the stock moved {move:+.1f}% in {horizon_days} days"
    hits = [name for name in ("stop", "target") if outcome.get(f"{name}_hit")]
    if hits:
        what += f" ({' and '.join(hits)} reached)"
    if action == "HOLD":
        if outcome["correct"]:
            return f"Staying out was right: {what}."
        return f"Staying out missed a move: {what}; this setup deserved a position."
    view = "bullish" if action == "BUY" else "bearish"
    if outcome["correct"]:
        return f"{action} was right: {what}; the {view} reading of this setup held."
    return (
        f"{action} was wrong: {what}; the {view} reading of this setup failed, so demand "
        "more confirmation or size smaller next time."
    )


def _due(store: RunStore, as_of: datetime) -> list[Decided]:
    """Finished decisions whose horizon ended by ``as_of`` and nobody reflected on."""
    due = []
    for run in store.recent(limit=_SCAN, kind="desk"):
        decision = Decided.of_run(run)
        if decision is None or decision.horizon_end > as_of:
            continue
        if any(e.get("decision_run") == run.id for e in store.events(run.id)):
            continue  # already reflected on
        due.append(decision)
    return sorted(due, key=lambda d: d.decided_at)[:_AT_ONCE]


def reflect_one(
    memory: DeskMemory, market: MarketData, decision: Decided, as_of: datetime
) -> tuple[str, dict[str, Any], str] | None:
    """Remember what ``decision`` taught, from bars known at ``as_of`` (written then): the
    memory's id, the outcome and the lesson; None when the bars do not cover its horizon."""
    try:
        bars = market.daily_bars(decision.symbol, as_of, start=decision.decided_at.date())
    except DataError as exc:
        logger.info("no bars to reflect on %s: %s", decision.run_id, exc)
        return None
    outcome = trade_outcome(
        traded_frame(bars), decision.decided_at, decision.horizon_end, decision.final
    )
    if outcome is None:
        return None
    lesson = lesson_of(outcome, int(decision.final["horizon_days"]))
    memory_id = memory.remember(
        symbol=decision.symbol,
        situation=decision.situation,
        lesson=lesson,
        outcome=outcome,
        decided_at=decision.decided_at,
        written_at=as_of,
        run_id=decision.run_id,
    )
    return memory_id, outcome, lesson


async def reflect(
    memory: DeskMemory, store: RunStore, market: MarketData, as_of: datetime, run_id: str
) -> list[ReflectionWritten]:
    """Reflect on every decision due at ``as_of``; the events name the reflecting run."""
    written = []
    for decision in await asyncio.to_thread(_due, store, as_of):
        done = await asyncio.to_thread(reflect_one, memory, market, decision, as_of)
        if done is None:
            continue
        memory_id, outcome, lesson = done
        event = ReflectionWritten(
            run_id=run_id,
            agent="reflection",
            symbol=decision.symbol,
            decision_run=decision.run_id,
            decided_at=decision.decided_at,
            written_at=as_of,
            action=decision.final["action"],
            return_pct=outcome["return_pct"],
            lesson=lesson,
            memory_id=memory_id,
        )
        await asyncio.to_thread(
            store.append_event,
            decision.run_id,
            event.model_copy(update={"run_id": decision.run_id}),
        )
        written.append(event)
    return written

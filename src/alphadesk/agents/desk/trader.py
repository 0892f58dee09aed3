"""The trader: turns the investment plan into a typed proposal with size and levels.

The stop sits at the nearest support (for a BUY) when it is a sensible distance away, else
two ATRs off the price; the target at the nearest resistance, else three ATRs. Without the
market analyst's facts the trader reads the price and levels itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from alphadesk.agent import Agent, Toolset
from alphadesk.agents.desk.deps import DeskDeps
from alphadesk.agents.desk.lessons import contrary_lessons
from alphadesk.agents.desk.models import Evidence, TradeProposal
from alphadesk.agents.desk.tasks import TraderTask
from alphadesk.agents.desk.validators import position_lies_in_range
from alphadesk.agents.spec import AgentSpec, load_prompt
from alphadesk.llm.rules import PlannedCall, RulesPolicy, Transcript
from alphadesk.tools.chart import CHART_TOOLS

__all__ = ["TRADER", "Levels", "trade_levels"]

HORIZON_DAYS = 14
_MAX_SIZE = 0.5  # of capital, at full conviction
_STOP_ATR, _TARGET_ATR = 2.0, 3.0
_MAX_STOP, _MAX_TARGET = 0.06, 0.08  # fractions of the price: levels stay near the data
_MIN_GAP_ATR = 0.5  # a level closer than this is noise, not a stop


@dataclass(frozen=True)
class Levels:
    """The price and the levels around it that a position is placed against."""

    price: float
    atr: float
    support: float | None
    resistance: float | None


def _levels(t: Transcript) -> Levels:
    facts = t.task_as(TraderTask).facts
    if "market.current_price" in facts:
        price = facts["market.current_price"]
        return Levels(
            price=price,
            atr=facts.get("market.atr_14") or 0.02 * price,
            support=facts.get("market.support_1"),
            resistance=facts.get("market.resistance_1"),
        )
    found = t.facts("find_support_resistance")  # the market analyst did not run
    price = float(found["current_price"])
    return Levels(
        price=price,
        atr=float(found.get("atr") or 0.02 * price),
        support=found.get("nearest_support"),
        resistance=found.get("nearest_resistance"),
    )


def trade_levels(action: str, at: Levels) -> dict[str, float]:
    """Entry, stop and target of ``action`` around ``at`` (none for a HOLD)."""
    if action == "HOLD":
        return {}
    sign = 1 if action == "BUY" else -1
    guard, goal = (at.support, at.resistance) if sign > 0 else (at.resistance, at.support)
    stop_gap = min(_STOP_ATR * at.atr, _MAX_STOP * at.price)
    target_gap = min(_TARGET_ATR * at.atr, _MAX_TARGET * at.price)
    stop = at.price - sign * stop_gap
    if guard is not None and _MIN_GAP_ATR * at.atr <= sign * (at.price - guard) <= stop_gap * 1.5:
        stop = guard - sign * 0.25 * at.atr  # just beyond the level, not on it
    target = at.price + sign * target_gap
    if goal is not None and _MIN_GAP_ATR * at.atr <= sign * (goal - at.price) <= target_gap:
        target = goal
    return {"entry": round(at.price, 2), "stop": round(stop, 2), "target": round(target, 2)}


def _look(t: Transcript) -> list[PlannedCall]:
    task = t.task_as(TraderTask)
    if "market.current_price" in task.facts:
        return []
    return [("find_support_resistance", {"symbol": task.symbol, "period": "1y"})]


def _cited(facts: dict[str, float], names: tuple[str, ...], reading: str) -> list[Evidence]:
    return [
        Evidence(fact=name, value=facts[name], lean="neutral", reading=reading)
        for name in names
        if name in facts
    ]


def _propose(t: Transcript) -> TradeProposal:
    task = t.task_as(TraderTask)
    plan, facts, memories = task.plan, task.facts, task.memories
    action, conviction = plan["recommendation"], float(plan["confidence"])
    size = round(_MAX_SIZE * conviction, 2) if action != "HOLD" else 0.0
    warnings = contrary_lessons(memories, action)
    if warnings:
        size = round(size / 2, 2)
    levels = trade_levels(action, _levels(t))
    rationale = f"{action} per the plan: {plan['rationale'].rstrip('.')}"
    if levels:
        rationale += (
            f"; entry {levels['entry']:g}, stop {levels['stop']:g}, target {levels['target']:g}"
        )
    if warnings:
        rationale += "; size halved: " + "; ".join(warnings[:2])
    return TradeProposal(
        action=action,
        size_fraction=max(size, 0.01) if action != "HOLD" else 0.0,
        horizon_days=HORIZON_DAYS,
        conviction=round(conviction, 2),
        rationale=rationale + ".",
        evidence=_cited(
            facts, ("market.current_price", "market.atr_14"), "price and volatility of the trade"
        ),
        **levels,
    )


TRADER: AgentSpec[DeskDeps, TradeProposal] = AgentSpec(
    agent=Agent(
        name="trader",
        max_tokens=1000,
        instructions=load_prompt("alphadesk.agents.desk", "trader_system").template,
        output_type=TradeProposal,
        toolset=Toolset.of(
            "desk_trader", CHART_TOOLS.only("get_price_history", "find_support_resistance")
        ),
        output_validators=(position_lies_in_range,),
    ),
    policy=RulesPolicy(plan=[_look], decide=_propose, name="trader"),
    turns={"quick": 2, "standard": 3, "deep": 5},
)

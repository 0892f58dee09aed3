"""The trading desk's tasks: one typed object per task template (see ``agents.task``).

Every desk task carries the fact sheet (empty for the analysts, who gather their own).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from alphadesk.agents.task import SymbolTask

__all__ = [
    "DESK_TASKS",
    "DeskTask",
    "FundamentalsTask",
    "JudgeTask",
    "ManagerTask",
    "MarketTask",
    "NewsTask",
    "ResearcherTask",
    "RiskTask",
    "SentimentTask",
    "TraderTask",
]

Json = dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class DeskTask(SymbolTask):
    package = "alphadesk.agents.desk"
    facts: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class MarketTask(DeskTask):
    template = "market"


@dataclass(frozen=True, kw_only=True)
class SentimentTask(DeskTask):
    template = "sentiment"


@dataclass(frozen=True, kw_only=True)
class NewsTask(DeskTask):
    template = "news"


@dataclass(frozen=True, kw_only=True)
class FundamentalsTask(DeskTask):
    template = "fundamentals"


@dataclass(frozen=True, kw_only=True)
class ResearcherTask(DeskTask):
    """One turn of the bull or bear researcher in the debate."""

    template = "researcher"
    round: int
    rounds: int
    stance: str
    opponent: str
    briefing: dict[str, Json]
    opponent_turn: Json | None
    memories: list[Json]


@dataclass(frozen=True, kw_only=True)
class ManagerTask(DeskTask):
    template = "manager"
    briefing: dict[str, Json]
    debate: list[Json]


@dataclass(frozen=True, kw_only=True)
class TraderTask(DeskTask):
    template = "trader"
    plan: Json
    memories: list[Json]


@dataclass(frozen=True, kw_only=True)
class RiskTask(DeskTask):
    """One turn of a risk analyst (risky, safe or neutral) in the risk discussion."""

    template = "risk"
    round: int
    rounds: int
    persona: str
    proposal: Json
    briefing: dict[str, Json]
    others: dict[str, Json] | None


@dataclass(frozen=True, kw_only=True)
class JudgeTask(DeskTask):
    template = "judge"
    proposal: Json
    plan: Json
    risk_debate: list[Json]
    memories: list[Json]


DESK_TASKS: dict[str, type[DeskTask]] = {
    "market": MarketTask,
    "sentiment": SentimentTask,
    "news": NewsTask,
    "fundamentals": FundamentalsTask,
    "bull": ResearcherTask,
    "bear": ResearcherTask,
    "manager": ManagerTask,
    "trader": TraderTask,
    "risky": RiskTask,
    "safe": RiskTask,
    "neutral": RiskTask,
    "judge": JudgeTask,
}

"""The trading desk's tasks: one typed object per task template (see ``agents.task``).

Every desk task carries the fact sheet (empty for the analysts, who gather their own).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from alphadesk.agents.task import SymbolTask

__all__ = [
    "DeskTask",
    "FundamentalsTask",
    "JudgeTask",
    "ManagerTask",
    "MarketTask",
    "NewsTask",
    "RebuttalTask",
    "ResearcherTask",
    "RiskRebuttalTask",
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
    """The bull's or bear's argument in one round of the debate: its case from the
    analysts' reports, answering (after the first round) the other side's last rebuttal."""

    template = "researcher"
    round: int
    rounds: int
    stance: str
    opponent: str
    briefing: dict[str, Json]
    opponent_turn: Json | None
    memories: list[Json]


@dataclass(frozen=True, kw_only=True)
class RebuttalTask(DeskTask):
    """The bull's or bear's rebuttal: its answer to the other side's argument of the same
    round, beside its own."""

    template = "rebuttal"
    round: int
    rounds: int
    stance: str
    opponent: str
    own_turn: Json
    opponent_turn: Json


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
    """A risk analyst's (risky, safe or neutral) view in one round of the risk
    discussion, answering (after the first round) the other two's last rebuttals."""

    template = "risk"
    round: int
    rounds: int
    persona: str
    proposal: Json
    briefing: dict[str, Json]
    others: dict[str, Json] | None


@dataclass(frozen=True, kw_only=True)
class RiskRebuttalTask(DeskTask):
    """A risk analyst's rebuttal: its answer to the other two's views of the same round,
    beside its own."""

    template = "risk_rebuttal"
    round: int
    rounds: int
    persona: str
    proposal: Json
    own_view: Json
    others: dict[str, Json]


@dataclass(frozen=True, kw_only=True)
class JudgeTask(DeskTask):
    template = "judge"
    proposal: Json
    plan: Json
    risk_debate: list[Json]
    memories: list[Json]

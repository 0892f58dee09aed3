"""The trading desk's agents (seed 004): four analysts, bull and bear researchers, a
research manager, a trader, risky/safe/neutral risk analysts and a risk judge.

Each is an AgentSpec: prompt templates in ``prompts/``, a toolset where it gathers data, a
typed output with validators tying it to the facts, and a deterministic ``rules`` policy
for offline runs. Agents that differ only by stance or persona come from one factory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, get_args

from alphadesk.agents.desk.deps import DeskDeps
from alphadesk.agents.desk.models import AnalystName, AnalystReport
from alphadesk.agents.spec import AgentSpec

__all__ = ["ANALYSTS", "DeskAgents", "DeskDeps", "default_agents"]

ANALYSTS: tuple[str, ...] = get_args(AnalystName)


@dataclass(frozen=True)
class DeskAgents:
    """Every agent of the desk, by role."""

    analysts: dict[str, AgentSpec[DeskDeps, AnalystReport]]
    researchers: dict[str, AgentSpec[DeskDeps, Any]]  # bull, bear
    manager: AgentSpec[DeskDeps, Any]
    trader: AgentSpec[DeskDeps, Any]
    risk: dict[str, AgentSpec[DeskDeps, Any]]  # risky, safe, neutral
    judge: AgentSpec[DeskDeps, Any]

    @property
    def all(self) -> list[AgentSpec[DeskDeps, Any]]:
        return [
            *self.analysts.values(),
            *self.researchers.values(),
            self.manager,
            self.trader,
            *self.risk.values(),
            self.judge,
        ]

    @property
    def names(self) -> list[str]:
        return [spec.name for spec in self.all]

    def by_name(self, name: str) -> AgentSpec[DeskDeps, Any]:
        for spec in self.all:
            if spec.name == name:
                return spec
        raise KeyError(f"no desk agent {name!r}; the agents are {self.names}")


def default_agents() -> DeskAgents:
    """The desk's agents as shipped."""
    from alphadesk.agents.desk.fundamentals import FUNDAMENTALS
    from alphadesk.agents.desk.market import MARKET
    from alphadesk.agents.desk.news import NEWS
    from alphadesk.agents.desk.researchers import BEAR, BULL, MANAGER
    from alphadesk.agents.desk.risk import JUDGE, NEUTRAL, RISKY, SAFE
    from alphadesk.agents.desk.sentiment import SENTIMENT
    from alphadesk.agents.desk.trader import TRADER

    analysts: dict[str, AgentSpec[DeskDeps, Any]] = {
        "market": MARKET,
        "sentiment": SENTIMENT,
        "news": NEWS,
        "fundamentals": FUNDAMENTALS,
    }
    return DeskAgents(
        analysts=analysts,
        researchers={"bull": BULL, "bear": BEAR},
        manager=MANAGER,
        trader=TRADER,
        risk={"risky": RISKY, "safe": SAFE, "neutral": NEUTRAL},
        judge=JUDGE,
    )

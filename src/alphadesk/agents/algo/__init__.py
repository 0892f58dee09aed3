"""The strategy lab's agents (seed 001): a research swarm of 15 subagents (one table, one
factory), three domain synthesizers (one factory) and a research leader; a strategy
developer drawing from a template library; a quality gate with a failure analyst and a
trajectory analyst.

Each is an AgentSpec: prompt templates in ``prompts/``, a typed output, and a
deterministic ``rules`` policy for offline runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from alphadesk.agents.algo.deps import AlgoDeps
from alphadesk.agents.spec import AgentSpec

__all__ = ["AlgoAgents", "AlgoDeps", "default_agents"]


@dataclass(frozen=True)
class AlgoAgents:
    """Every agent of the lab, by role."""

    subagents: list[AgentSpec[Any, Any]]
    synthesizers: dict[str, AgentSpec[Any, Any]]
    leader: AgentSpec[Any, Any]
    strategist: AgentSpec[Any, Any]
    failure: AgentSpec[Any, Any]
    trajectory: AgentSpec[Any, Any]
    gate: AgentSpec[Any, Any]

    @property
    def all(self) -> list[AgentSpec[Any, Any]]:
        return [
            *self.subagents,
            *self.synthesizers.values(),
            self.leader,
            self.strategist,
            self.failure,
            self.trajectory,
            self.gate,
        ]

    @property
    def names(self) -> list[str]:
        return [spec.name for spec in self.all]


def default_agents() -> AlgoAgents:
    """The lab's agents as shipped."""
    from alphadesk.agents.algo.developer import STRATEGIST
    from alphadesk.agents.algo.gate import FAILURE_ANALYST, QUALITY_GATE, TRAJECTORY_ANALYST
    from alphadesk.agents.algo.research import LEADER, research_agents

    subagents, synthesizers = research_agents()
    return AlgoAgents(
        subagents=subagents,
        synthesizers=synthesizers,
        leader=LEADER,
        strategist=STRATEGIST,
        failure=FAILURE_ANALYST,
        trajectory=TRAJECTORY_ANALYST,
        gate=QUALITY_GATE,
    )

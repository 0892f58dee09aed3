"""The cash-secured-put analysts: chart, options and research (seed 000).

Each is an AgentSpec: prompt templates in ``prompts/``, a toolset, a typed output with
validators tying it to the facts, and a deterministic ``rules`` policy for offline runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from alphadesk.agents.csp.deps import CspDeps
from alphadesk.agents.csp.models import ChartAnalysis, OptionsAnalysis, ResearchAnalysis
from alphadesk.agents.spec import AgentSpec

__all__ = ["CspAgents", "CspDeps", "default_agents"]


@dataclass(frozen=True)
class CspAgents:
    """The desk's three analysts and its narrator, and how each analyst's verdict reads.
    Each agent's task is a typed object of ``agents.csp.tasks``."""

    chart: AgentSpec[CspDeps, ChartAnalysis]
    options: AgentSpec[CspDeps, OptionsAnalysis]
    research: AgentSpec[CspDeps, ResearchAnalysis]
    narrator: AgentSpec[CspDeps, str]

    @property
    def names(self) -> list[str]:
        """The analysts (the narrator is optional and named ``orchestrator``)."""
        return [self.chart.name, self.options.name, self.research.name]

    @property
    def all(self) -> list[AgentSpec[CspDeps, Any]]:
        """The analysts and the narrator."""
        return [self.chart, self.options, self.research, self.narrator]

    def by_name(self, name: str) -> AgentSpec[CspDeps, Any]:
        for spec in self.all:
            if spec.name == name:
                return spec
        raise KeyError(f"no csp agent {name!r}; the agents are {self.names}")

    @staticmethod
    def rejection(name: str, output: BaseModel) -> str | None:
        """Why this analyst rejects the trade, or None."""
        if isinstance(output, ChartAnalysis) and output.recommendation == "reject":
            return output.chart_notes
        if isinstance(output, OptionsAnalysis) and output.recommendation == "reject":
            return output.rationale
        if isinstance(output, ResearchAnalysis) and output.recommendation == "reject":
            return output.research_notes
        return None


def default_agents() -> CspAgents:
    """The desk's analysts as shipped."""
    from alphadesk.agents.csp.chart import CHART
    from alphadesk.agents.csp.narrator import NARRATOR
    from alphadesk.agents.csp.options import OPTIONS
    from alphadesk.agents.csp.research import RESEARCH

    return CspAgents(chart=CHART, options=OPTIONS, research=RESEARCH, narrator=NARRATOR)

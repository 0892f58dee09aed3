"""The cash-secured-put analysts: chart, options and research (seed 000).

Each is an AgentSpec: prompt templates in ``prompts/``, a toolset, a typed output with
validators tying it to the facts, and a deterministic ``rules`` policy for offline runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel

from alphadesk.agents.csp.deps import CspDeps
from alphadesk.agents.csp.models import ChartAnalysis, OptionsAnalysis, ResearchAnalysis
from alphadesk.agents.spec import AgentSpec, load_prompt

__all__ = ["CspAgents", "CspDeps", "default_agents"]

_PROMPTS = "alphadesk.agents.csp"


@dataclass(frozen=True)
class CspAgents:
    """The desk's three analysts, and how each one's task and verdict read."""

    chart: AgentSpec[CspDeps, ChartAnalysis]
    options: AgentSpec[CspDeps, OptionsAnalysis]
    research: AgentSpec[CspDeps, ResearchAnalysis]
    narrator: AgentSpec[CspDeps, str]

    @property
    def names(self) -> list[str]:
        """The analysts (the narrator is optional and named ``orchestrator``)."""
        return [self.chart.name, self.options.name, self.research.name]

    def by_name(self, name: str) -> AgentSpec[CspDeps, Any]:
        for spec in (self.chart, self.options, self.research, self.narrator):
            if spec.name == name:
                return spec
        raise KeyError(f"no csp agent {name!r}; the agents are {self.names}")

    def narrative_prompt(self, symbol: str, as_of: datetime, decision: BaseModel) -> str:
        values = {
            "symbol": symbol,
            "as_of": as_of.date().isoformat(),
            # Only what was decided: ids and timings would make every request unique.
            "decision": decision.model_dump_json(
                indent=1, exclude_none=True, exclude={"run_id", "agents"}
            ),
        }
        return load_prompt(_PROMPTS, "narrator_task").substitute(values)

    def prompt(self, name: str, deps: CspDeps, as_of: datetime) -> str:
        """The task message for agent ``name``, rendered from its template."""
        values: dict[str, Any] = {"symbol": deps.symbol, "as_of": as_of.date().isoformat()}
        if name == self.options.name:
            constraints = json.dumps(deps.constraints.model_dump(), indent=1)
            values |= {"constraints": constraints, "chart_context": _context(deps.chart)}
        if name == self.research.name:
            horizon = as_of.date() + timedelta(days=deps.horizon_days)
            values |= {"horizon_days": deps.horizon_days, "horizon_date": horizon.isoformat()}
        return load_prompt(_PROMPTS, f"{name}_task").substitute(values)

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


def _context(chart: ChartAnalysis | None) -> str:
    if chart is None:
        return "null"
    return json.dumps(chart.model_dump(mode="json"), indent=1)


def default_agents() -> CspAgents:
    """The desk's analysts as shipped."""
    from alphadesk.agents.csp.chart import CHART
    from alphadesk.agents.csp.narrator import NARRATOR
    from alphadesk.agents.csp.options import OPTIONS
    from alphadesk.agents.csp.research import RESEARCH

    return CspAgents(chart=CHART, options=OPTIONS, research=RESEARCH, narrator=NARRATOR)

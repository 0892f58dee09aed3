"""The cash-secured-put desk's tasks: one typed object per task template (see
``agents.task``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from pydantic import BaseModel

from alphadesk.agents.csp.models import ChartAnalysis, CspConstraints
from alphadesk.agents.task import SymbolTask

__all__ = ["ChartTask", "CspTask", "NarrativeTask", "OptionsTask", "ResearchTask"]


@dataclass(frozen=True, kw_only=True)
class CspTask(SymbolTask):
    package = "alphadesk.agents.csp"


@dataclass(frozen=True, kw_only=True)
class ChartTask(CspTask):
    template = "chart"


@dataclass(frozen=True, kw_only=True)
class OptionsTask(CspTask):
    """Find the put: within ``constraints``, in view of the chart analyst's result."""

    template = "options"
    constraints: CspConstraints
    chart_context: ChartAnalysis | None


@dataclass(frozen=True, kw_only=True)
class ResearchTask(CspTask):
    """Look for red flags over the put's life: the next ``horizon_days`` days."""

    template = "research"
    horizon_days: int

    def values(self) -> dict[str, str]:
        horizon = self.as_of.date() + timedelta(days=self.horizon_days)
        return super().values() | {"horizon_date": horizon.isoformat()}


@dataclass(frozen=True, kw_only=True)
class NarrativeTask(CspTask):
    """Tell the desk's ``decision`` in words (only an LLM narrates; rules do not)."""

    template = "narrator"
    decision: BaseModel

    def values(self) -> dict[str, str]:
        # Only what was decided: ids and timings would make every request unique.
        decided = self.decision.model_dump_json(
            indent=1, exclude_none=True, exclude={"run_id", "agents"}
        )
        return super().values() | {"decision": decided}

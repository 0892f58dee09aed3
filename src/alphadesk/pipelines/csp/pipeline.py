"""The cash-secured-put pipeline as a LangGraph graph: chart, options (with the chart's context),
research, synthesis, with early rejection and checkpoints so an interrupted run resumes.

    START -> chart --reject/fail--> finish
               |                      ^
               v                      |
            options --reject/fail-----+
               |                      |
               v                      |
            research -----------------+ -> END

With ``parallel_research`` the chart node runs the research agent alongside the chart agent
and cancels it when the chart rejects: less wall time, sometimes wasted model calls.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from langgraph.graph import END, START, StateGraph

from alphadesk.agents.csp import CspAgents, default_agents
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.llm.base import Model
from alphadesk.pipelines.agent_pipeline import AgentPipeline
from alphadesk.pipelines.agent_steps import AgentSteps
from alphadesk.pipelines.base import Nodes, PipelineRun
from alphadesk.pipelines.csp.models import CspRequest, CspResult
from alphadesk.pipelines.csp.nodes import CSP_STATE, CspNodeDeps, CspNodes, CspState, ReportChart
from alphadesk.pipelines.csp.report import render_report

__all__ = ["CspPipeline", "CspState"]


class CspPipeline(AgentPipeline[CspRequest, CspResult]):
    """The CSP pipeline's agents and models. Stateless per analysis, so one pipeline can
    analyse many symbols concurrently (a screen)."""

    kind = "csp"
    request_type = CspRequest
    result_type = CspResult

    def __init__(
        self,
        settings: Settings,
        market: MarketData,
        *,
        model: str | None = None,
        models: Mapping[str, Model] | None = None,
        agents: CspAgents | None = None,
    ) -> None:
        self.agents = agents or default_agents()
        super().__init__(
            settings,
            market,
            self.agents.all,
            render_report,
            labelled=self.agents.names,
            model=model,
            models=models,
        )

    def nodes(self, request: CspRequest, run: PipelineRun) -> Nodes:
        """The graph's node functions, bound to one run."""
        steps = AgentSteps(run, self.models, self.settings.limits)
        chart = ReportChart(run, self.market, request)
        deps = CspNodeDeps(
            agents=self.agents, market=self.market, steps=steps, run=run, report_chart=chart
        )
        return CspNodes(deps, request).node

    @staticmethod
    def graph(request: CspRequest, node: Nodes) -> StateGraph[CspState]:
        """The graph with ``node(name)`` as each node's function. The same for every
        request: the chart node decides itself whether research runs alongside."""
        graph = StateGraph(CspState)
        for name in ("chart", "options", "research", "finish"):
            graph.add_node(name, node(name))
        graph.add_edge(START, "chart")
        graph.add_conditional_edges("chart", _unless_stopped("options"), ["options", "finish"])
        graph.add_conditional_edges("options", _after_options, ["research", "finish"])
        graph.add_edge("research", "finish")
        graph.add_edge("finish", END)
        return graph


def _unless_stopped(next_node: str) -> Callable[..., Awaitable[str]]:
    def route(state: CspState) -> str:
        return "finish" if "verdict" in state else next_node

    return CSP_STATE.route(route)


def _options_done(state: CspState) -> str:
    if "verdict" in state or "research" in state:  # research may have run alongside the chart
        return "finish"
    return "research"


_after_options = CSP_STATE.route(_options_done)

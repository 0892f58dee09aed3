"""The cash-secured-put desk as a LangGraph graph: chart, options (with the chart's context),
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

import asyncio
import contextlib
import operator
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Annotated, Any, TypedDict, TypeVar

from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel

from alphadesk.agents.csp import CspAgents, CspDeps, default_agents
from alphadesk.agents.csp.models import ChartAnalysis, OptionsAnalysis, ResearchAnalysis
from alphadesk.agents.spec import AgentSpec
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.data.errors import DataError
from alphadesk.llm.base import Model
from alphadesk.llm.rules import RULES_MODEL
from alphadesk.pipelines.agent_steps import AgentModels, AgentSteps, limits_from
from alphadesk.pipelines.base import NodeFunction, Nodes, PipelineRun
from alphadesk.pipelines.csp.models import AgentReport, CspRequest, CspResult
from alphadesk.pipelines.csp.report import render_report
from alphadesk.pipelines.csp.synthesis import synthesize
from alphadesk.pipelines.events import StepFinished
from alphadesk.tools.chart.render import save_chart
from alphadesk.tools.deps import ToolDeps

__all__ = ["CspDesk", "CspState"]

_M = TypeVar("_M", bound=BaseModel)


class CspState(TypedDict, total=False):
    """Graph state; plain JSON so every checkpoint can be stored and resumed."""

    request: dict[str, Any]
    chart: dict[str, Any]
    options: dict[str, Any]
    research: dict[str, Any]
    verdict: dict[str, Any]  # {"decision": "reject" | "failed", "stage": ..., "reason": ...}
    reports: Annotated[list[dict[str, Any]], operator.add]
    missing: Annotated[list[str], operator.add]
    result: dict[str, Any]


@dataclass(frozen=True)
class _Step:
    """What one agent step adds to the state."""

    update: dict[str, Any]

    @property
    def stopped(self) -> bool:
        return "verdict" in self.update


class CspDesk:
    """The desk's agents and models. Stateless per analysis, so one desk can analyse many
    symbols concurrently (a screen)."""

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
        self.settings, self.market = settings, market
        self.agents = agents or default_agents()
        self.model = AgentModels(
            settings,
            [*(self.agents.by_name(n) for n in self.agents.names), self.agents.narrator],
            override=model,
            models=models,
        )

    @property
    def model_label(self) -> str:
        return self.model.label(self.agents.names)

    def title(self, request: CspRequest) -> str:
        return f"csp {request.symbol}"

    def report(self, result: CspResult) -> str:
        return render_report(result)

    def nodes(self, request: CspRequest, run: PipelineRun) -> Nodes:
        """The graph's node functions, bound to one run."""
        steps = AgentSteps(run, self.model, limits_from(self.settings))
        return _Nodes(self, run, steps).node

    @staticmethod
    def graph(request: CspRequest, node: Nodes) -> StateGraph[CspState]:
        """The desk's graph with ``node(name)`` as each node's function. The same for every
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


@dataclass
class _Nodes:
    """One analysis: the graph's nodes, bound to its run."""

    desk: CspDesk
    run: PipelineRun
    steps: AgentSteps

    def node(self, name: str) -> NodeFunction:
        return getattr(self, f"_{name}_node")

    async def _chart_node(self, state: CspState) -> dict[str, Any]:
        request = CspRequest.model_validate(state["request"])
        agents = self.desk.agents
        if not request.parallel_research:
            return (await self._step(agents.chart, request, state)).update
        research = asyncio.create_task(self._step(agents.research, request, state))
        chart = await self._step(agents.chart, request, state)
        if chart.stopped:
            if not research.done():  # a research that already finished is simply unused
                research.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await research
                self.run.emit(
                    StepFinished(
                        run_id=self.run.run_id,
                        agent="research",
                        symbol=request.symbol,
                        status="cancelled",
                        reason="the chart step stopped the run first",
                    )
                )
            return chart.update
        found = await research
        return _merge(chart.update, found.update)

    async def _options_node(self, state: CspState) -> dict[str, Any]:
        request = CspRequest.model_validate(state["request"])
        return (await self._step(self.desk.agents.options, request, state)).update

    async def _research_node(self, state: CspState) -> dict[str, Any]:
        request = CspRequest.model_validate(state["request"])
        return (await self._step(self.desk.agents.research, request, state)).update

    async def _finish_node(self, state: CspState) -> dict[str, Any]:
        request = CspRequest.model_validate(state["request"])
        chart = _load(ChartAnalysis, state.get("chart"))
        options = _load(OptionsAnalysis, state.get("options"))
        research = _load(ResearchAnalysis, state.get("research"))
        result = CspResult(
            symbol=request.symbol,
            as_of=request.as_of,
            decision="select",
            chart=chart,
            options=options,
            research=research,
            agents=[AgentReport.model_validate(r) for r in state.get("reports", [])],
            data_missing=sorted(set(state.get("missing", []))),
            run_id=self.run.run_id,
            price_basis=await asyncio.to_thread(
                _price_basis, self.desk.market, request.symbol, request.as_of
            ),
        )
        verdict = state.get("verdict")
        if verdict is not None:
            result = result.model_copy(update=verdict)
        elif chart and options and research:
            synthesis = synthesize(request.symbol, chart, options, research)
            result = result.model_copy(update={"synthesis": synthesis})
            result = await self._narrate(request, result)
        if self.run.charts:  # the report's chart: once, whatever the decision
            deps = ToolDeps(market=self.desk.market, run_dir=self.run.run_dir)
            await save_chart(deps, request.symbol, request.as_of)
        return {"result": result.model_dump(mode="json")}

    async def _narrate(self, request: CspRequest, result: CspResult) -> CspResult:
        """Add the orchestrator model's narrative; none with `rules`. A failed narrative is
        reported with the agents and changes nothing else."""
        spec = self.desk.agents.narrator
        if self.desk.model(spec.name).name == RULES_MODEL or result.synthesis is None:
            return result
        prompt = self.desk.agents.narrative_prompt(request.symbol, request.as_of, result)
        step = await self.steps.run(spec, prompt, None, request)  # the narrator has no tools
        update: dict[str, Any] = {"agents": [*result.agents, *filter(None, [step.report])]}
        if step.output is not None:
            update["synthesis"] = result.synthesis.model_copy(update={"narrative": step.output})
        return result.model_copy(update=update)

    async def _step(
        self, spec: AgentSpec[CspDeps, Any], request: CspRequest, state: CspState
    ) -> _Step:
        """Run one agent and turn its outcome into a state update."""
        deps = CspDeps(
            market=self.desk.market,
            run_dir=self.run.run_dir,
            symbol=request.symbol,
            constraints=request.constraints,
            chart=_load(ChartAnalysis, state.get("chart")),
            options=_load(OptionsAnalysis, state.get("options")),
        )
        prompt = self.desk.agents.prompt(spec.name, deps, request.as_of)
        rejection = partial(self.desk.agents.rejection, spec.name)
        step = await self.steps.run(spec, prompt, deps, request, rejection=rejection)
        update: dict[str, Any] = {"missing": step.missing}
        if step.report is not None:
            update["reports"] = [step.report.model_dump()]
        if step.output is None:
            update["verdict"] = {"decision": "failed", "stage": spec.name, "reason": step.failure}
            return _Step(update)
        update[spec.name] = step.output.model_dump(mode="json")
        if step.rejection is not None:
            reason = f"{spec.name}: {step.rejection}"
            update["verdict"] = {"decision": "reject", "stage": spec.name, "reason": reason}
        return _Step(update)


def _price_basis(market: MarketData, symbol: str, as_of: datetime) -> str | None:
    """The price basis of the bars behind the run (the chart's six months)."""
    try:
        bars = market.daily_bars(symbol, as_of, start=(as_of - timedelta(days=183)).date())
    except DataError:
        return None
    return bars.basis or None


def _unless_stopped(next_node: str) -> Callable[[CspState], Awaitable[str]]:
    async def route(state: CspState) -> str:
        return "finish" if "verdict" in state else next_node

    return route


async def _after_options(state: CspState) -> str:
    if "verdict" in state or "research" in state:  # research may have run alongside the chart
        return "finish"
    return "research"


def _merge(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    merged = {**first, **second}
    for key in ("reports", "missing"):
        merged[key] = first.get(key, []) + second.get(key, [])
    if "verdict" in first:
        merged["verdict"] = first["verdict"]
    return merged


def _load(model: type[_M], data: dict[str, Any] | None) -> _M | None:
    return None if data is None else model.model_validate(data)

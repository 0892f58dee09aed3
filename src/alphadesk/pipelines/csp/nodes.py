"""The cash-secured-put graph's nodes: each runs its agent as a step and returns a typed
state update; the graph keeps the state as JSON (``CSP_STATE``), so every checkpoint can be
stored and an interrupted run resumed."""

from __future__ import annotations

import asyncio
import contextlib
import operator
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Annotated, Any, Literal

from pydantic import BaseModel
from typing_extensions import TypedDict  # pydantic reads a TypedDict of it on Python 3.11

from alphadesk.agents.csp import CspAgents, CspDeps
from alphadesk.agents.csp.models import ChartAnalysis, OptionsAnalysis, ResearchAnalysis
from alphadesk.agents.csp.tasks import ChartTask, CspTask, NarrativeTask, OptionsTask, ResearchTask
from alphadesk.agents.spec import AgentSpec
from alphadesk.data.base import MarketData
from alphadesk.data.errors import DataError
from alphadesk.llm.rules import RULES_MODEL
from alphadesk.pipelines.agent_steps import AgentSteps
from alphadesk.pipelines.base import NodeFunction, PipelineRun, StateCodec
from alphadesk.pipelines.csp.models import AgentReport, CspRequest, CspResult
from alphadesk.pipelines.csp.synthesis import synthesize
from alphadesk.pipelines.events import StepFinished
from alphadesk.tools.chart.render import save_chart
from alphadesk.tools.deps import ToolDeps

__all__ = ["CSP_STATE", "CspNodeDeps", "CspNodes", "CspState", "Stop"]


class Stop(BaseModel):
    """Why a step stopped the run: its agent (``stage``) rejected the trade or failed."""

    decision: Literal["reject", "failed"]
    stage: str
    reason: str | None


class CspState(TypedDict, total=False):
    """Graph state, typed; the graph keeps it as JSON (``CSP_STATE``) so every checkpoint
    can be stored and resumed."""

    chart: ChartAnalysis
    options: OptionsAnalysis
    research: ResearchAnalysis
    verdict: Stop
    reports: Annotated[list[AgentReport], operator.add]
    missing: Annotated[list[str], operator.add]
    result: CspResult


CSP_STATE = StateCodec(CspState)


class ReportChart:
    """The run's report chart, drawn while the options and research agents work (it is
    started once the chart agent is done, so a chart that agent saved is kept) and awaited
    when the run finishes. One per run."""

    def __init__(self, run: PipelineRun, market: MarketData, request: CspRequest) -> None:
        self._run, self._market, self._request = run, market, request
        self._drawing: asyncio.Task[object] | None = None

    def start(self) -> None:
        if self._drawing is None and self._run.charts:
            deps = ToolDeps(market=self._market, run_dir=self._run.run_dir)
            self._drawing = asyncio.create_task(
                save_chart(deps, self._request.symbol, self._request.as_of)
            )

    async def saved(self) -> None:
        self.start()  # a run resumed at its end has not started it
        if self._drawing is not None:
            await self._drawing


@dataclass(frozen=True)
class CspNodeDeps:
    """What the nodes of one run need: the agents, the market, the agent steps (models,
    budgets, ledger and events bound to the run), the run itself and its report chart."""

    agents: CspAgents
    market: MarketData
    steps: AgentSteps
    run: PipelineRun
    report_chart: ReportChart


@dataclass(frozen=True)
class _Step:
    """What one agent step adds to the state."""

    update: CspState

    @property
    def stopped(self) -> bool:
        return "verdict" in self.update


@dataclass(frozen=True)
class CspNodes:
    """The graph's nodes for one request, bound to their dependencies."""

    deps: CspNodeDeps
    request: CspRequest

    def node(self, name: str) -> NodeFunction:
        """The function of the graph node ``name``."""
        return CSP_STATE.node(getattr(self, name))

    async def chart(self, state: CspState) -> CspState:
        """The chart agent; with ``parallel_research`` the research agent alongside, which
        is cancelled when the chart rejects."""
        run = self.deps.run
        if not self.request.parallel_research:
            update = (await self._chart(state)).update
            self.deps.report_chart.start()
            return update
        research = asyncio.create_task(self._research(state))
        chart = await self._chart(state)
        self.deps.report_chart.start()
        if chart.stopped:
            if not research.done():  # a research that already finished is simply unused
                research.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await research
                run.emit(
                    StepFinished(
                        run_id=run.run_id,
                        agent="research",
                        symbol=self.request.symbol,
                        status="cancelled",
                        reason="the chart step stopped the run first",
                    )
                )
            return chart.update
        found = await research
        return _merge(chart.update, found.update)

    async def options(self, state: CspState) -> CspState:
        deps = self._tool_deps(state)
        task = OptionsTask(
            symbol=deps.symbol,
            as_of=self.request.as_of,
            constraints=deps.constraints,
            chart_context=deps.chart,
        )
        return (await self._step(self.deps.agents.options, task, deps)).update

    async def research(self, state: CspState) -> CspState:
        return (await self._research(state)).update

    async def _chart(self, state: CspState) -> _Step:
        deps = self._tool_deps(state)
        task = ChartTask(symbol=deps.symbol, as_of=self.request.as_of)
        return await self._step(self.deps.agents.chart, task, deps)

    async def _research(self, state: CspState) -> _Step:
        deps = self._tool_deps(state)
        task = ResearchTask(
            symbol=deps.symbol, as_of=self.request.as_of, horizon_days=deps.horizon_days
        )
        return await self._step(self.deps.agents.research, task, deps)

    async def finish(self, state: CspState) -> CspState:
        request, run, market = self.request, self.deps.run, self.deps.market
        chart, options = state.get("chart"), state.get("options")
        research = state.get("research")
        result = CspResult(
            symbol=request.symbol,
            as_of=request.as_of,
            decision="select",
            chart=chart,
            options=options,
            research=research,
            agents=state.get("reports", []),
            data_missing=sorted(set(state.get("missing", []))),
            run_id=run.run_id,
            price_basis=await asyncio.to_thread(
                _price_basis, market, request.symbol, request.as_of
            ),
        )
        verdict = state.get("verdict")
        if verdict is not None:
            result = result.model_copy(update=verdict.model_dump())
        elif chart and options and research:
            synthesis = synthesize(request.symbol, chart, options, research)
            result = result.model_copy(update={"synthesis": synthesis})
            result = await self._narrate(result)
        await self.deps.report_chart.saved()  # the report's chart: once, whatever the decision
        return {"result": result}

    async def _narrate(self, result: CspResult) -> CspResult:
        """Add the orchestrator model's narrative; none with `rules`. A failed narrative is
        reported with the agents and changes nothing else."""
        agents, steps, request = self.deps.agents, self.deps.steps, self.request
        spec = agents.narrator
        if steps.models(spec.name).name == RULES_MODEL or result.synthesis is None:
            return result
        task = NarrativeTask(symbol=request.symbol, as_of=request.as_of, decision=result)
        step = await steps.run(spec, task, None, request)  # the narrator has no tools
        update: dict[str, Any] = {"agents": [*result.agents, *filter(None, [step.report])]}
        if step.output is not None:
            update["synthesis"] = result.synthesis.model_copy(update={"narrative": step.output})
        return result.model_copy(update=update)

    def _tool_deps(self, state: CspState) -> CspDeps:
        """What an analyst's tools read: the market, the request, what the analysts before
        it found."""
        request = self.request
        return CspDeps(
            market=self.deps.market,
            run_dir=self.deps.run.run_dir,
            symbol=request.symbol,
            constraints=request.constraints,
            chart=state.get("chart"),
            options=state.get("options"),
        )

    async def _step(self, spec: AgentSpec[CspDeps, Any], task: CspTask, deps: CspDeps) -> _Step:
        """Run one agent on its ``task`` and turn its outcome into a state update."""
        rejection = partial(self.deps.agents.rejection, spec.name)
        step = await self.deps.steps.run(spec, task, deps, self.request, rejection=rejection)
        update: CspState = {"missing": step.missing}
        if step.report is not None:
            update["reports"] = [step.report]
        if step.output is None:
            update["verdict"] = Stop(decision="failed", stage=spec.name, reason=step.failure)
            return _Step(update)
        found: dict[str, Any] = dict(update)
        found[spec.name] = step.output  # chart, options or research
        update = CspState(**found)  # type: ignore[typeddict-item]
        if step.rejection is not None:
            reason = f"{spec.name}: {step.rejection}"
            update["verdict"] = Stop(decision="reject", stage=spec.name, reason=reason)
        return _Step(update)


def _price_basis(market: MarketData, symbol: str, as_of: datetime) -> str | None:
    """The price basis of the bars behind the run (the chart's six months)."""
    try:
        bars = market.daily_bars(symbol, as_of, start=(as_of - timedelta(days=183)).date())
    except DataError:
        return None
    return bars.basis or None


def _merge(first: CspState, second: CspState) -> CspState:
    merged: CspState = {**first, **second}
    merged["reports"] = first.get("reports", []) + second.get("reports", [])
    merged["missing"] = first.get("missing", []) + second.get("missing", [])
    if "verdict" in first:
        merged["verdict"] = first["verdict"]
    return merged

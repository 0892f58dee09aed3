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
import json
import operator
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypedDict, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel

from alphadesk.agent import Completed, RunResult, UsageLedger, UsageLimits
from alphadesk.agent.events import BaseEvent
from alphadesk.agents.csp import CspAgents, CspDeps, default_agents
from alphadesk.agents.csp.models import ChartAnalysis, OptionsAnalysis, ResearchAnalysis
from alphadesk.agents.spec import AgentSpec, model_for
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.data.errors import DataError
from alphadesk.llm.base import Model
from alphadesk.llm.messages import ToolMessage, text_of
from alphadesk.llm.rules import RULES_MODEL
from alphadesk.pipelines.csp.models import AgentReport, CspRequest, CspResult
from alphadesk.pipelines.csp.synthesis import synthesize
from alphadesk.pipelines.events import StepFinished, StepStarted

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
        self._model_override = model
        self._models = dict(models or {})

    def model(self, agent: str) -> Model:
        """The model an agent runs with (resolved once, then reused)."""
        if agent not in self._models:
            spec = self.agents.by_name(agent)
            self._models[agent] = model_for(spec, self.settings, self._model_override)
        return self._models[agent]

    async def analyze(
        self,
        request: CspRequest,
        *,
        run_id: str,
        ledger: UsageLedger,
        on_event: Callable[[BaseEvent], None] | None = None,
        run_dir: Path | None = None,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        resume: bool = False,
        interrupt_after: list[str] | None = None,
    ) -> CspResult | None:
        """Analyse one symbol. Returns None when stopped at ``interrupt_after``; call again
        with ``resume=True`` and the same ``run_id`` to continue from the checkpoint."""
        session = _Session(self, run_id, ledger, on_event or (lambda _event: None), run_dir)
        graph = session.graph().compile(checkpointer=checkpointer, interrupt_after=interrupt_after)
        config: Any = {"configurable": {"thread_id": run_id}}
        initial = None if resume else CspState(request=request.model_dump(mode="json"))
        state = await graph.ainvoke(initial, config)
        return CspResult.model_validate(state["result"]) if "result" in state else None


@dataclass
class _Session:
    """One analysis: the graph's nodes, bound to its run id, ledger and event sink."""

    desk: CspDesk
    run_id: str
    ledger: UsageLedger
    emit: Callable[[BaseEvent], None]
    run_dir: Path | None

    def graph(self) -> StateGraph[CspState]:
        graph = StateGraph(CspState)
        graph.add_node("chart", self._chart_node)
        graph.add_node("options", self._options_node)
        graph.add_node("research", self._research_node)
        graph.add_node("finish", self._finish_node)
        graph.add_edge(START, "chart")
        graph.add_conditional_edges("chart", _unless_stopped("options"), ["options", "finish"])
        graph.add_conditional_edges("options", _after_options, ["research", "finish"])
        graph.add_edge("research", "finish")
        graph.add_edge("finish", END)
        return graph

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
                self._emit_step(
                    StepFinished,
                    "research",
                    request.symbol,
                    status="cancelled",
                    reason="the chart step stopped the run first",
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
            run_id=self.run_id,
        )
        verdict = state.get("verdict")
        if verdict is not None:
            result = result.model_copy(update=verdict)
        elif chart and options and research:
            synthesis = synthesize(request.symbol, chart, options, research)
            result = result.model_copy(update={"synthesis": synthesis})
            result = await self._narrate(request, result)
        return {"result": result.model_dump(mode="json")}

    async def _narrate(self, request: CspRequest, result: CspResult) -> CspResult:
        """Add the orchestrator model's narrative; none with `rules`. A failed narrative is
        reported with the agents and changes nothing else."""
        spec = self.desk.agents.narrator
        model = self.desk.model(spec.name)
        if model.name == RULES_MODEL or result.synthesis is None:
            return result
        started = time.monotonic()
        run = await spec.at_depth(request.depth).run(
            model,
            self.desk.agents.narrative_prompt(request.symbol, request.as_of, result),
            deps=None,  # type: ignore[arg-type]  # the narrator has no tools
            as_of=request.as_of,
            run_id=self.run_id,
            ledger=self.ledger,
            limits=self._limits(),
            on_event=self.emit,
        )
        report = _report(spec.name, run, time.monotonic() - started)
        update: dict[str, Any] = {"agents": [*result.agents, report]}
        if run.ok:
            update["synthesis"] = result.synthesis.model_copy(update={"narrative": run.output})
        return result.model_copy(update=update)

    async def _step(
        self, spec: AgentSpec[CspDeps, Any], request: CspRequest, state: CspState
    ) -> _Step:
        """Run one agent and turn its outcome into a state update."""
        model = self.desk.model(spec.name)
        symbol = request.symbol
        self._emit_step(StepStarted, spec.name, symbol, model=model.name)
        deps = CspDeps(
            market=self.desk.market,
            run_dir=self.run_dir,
            symbol=request.symbol,
            constraints=request.constraints,
            chart=_load(ChartAnalysis, state.get("chart")),
            options=_load(OptionsAnalysis, state.get("options")),
        )
        started = time.monotonic()
        try:
            result = await spec.at_depth(request.depth).run(
                model,
                self.desk.agents.prompt(spec.name, deps, request.as_of),
                deps=deps,
                as_of=request.as_of,
                run_id=self.run_id,
                ledger=self.ledger,
                limits=self._limits(),
                on_event=self.emit,
            )
        except DataError as exc:  # the data the validators check against is unavailable
            reason = f"{spec.name}: {type(exc).__name__}: {exc}"
            self._emit_step(StepFinished, spec.name, symbol, status="failed", reason=reason)
            return _Step({"verdict": {"decision": "failed", "stage": spec.name, "reason": reason}})
        report = _report(spec.name, result, time.monotonic() - started)
        update: dict[str, Any] = {"reports": [report.model_dump()], "missing": _missing(result)}
        if not isinstance(result.outcome, Completed):
            reason = f"{spec.name}: {result.outcome.reason}"
            update["verdict"] = {"decision": "failed", "stage": spec.name, "reason": reason}
            self._emit_step(StepFinished, spec.name, symbol, status="failed", reason=reason)
            return _Step(update)
        update[spec.name] = result.output.model_dump(mode="json")
        rejection = self.desk.agents.rejection(spec.name, result.output)
        if rejection is not None:
            reason = f"{spec.name}: {rejection}"
            update["verdict"] = {"decision": "reject", "stage": spec.name, "reason": reason}
        status = "rejected" if rejection else "completed"
        self._emit_step(StepFinished, spec.name, symbol, status=status, reason=rejection)
        return _Step(update)

    def _limits(self) -> UsageLimits:
        return UsageLimits.model_validate(self.desk.settings.limits.model_dump())

    def _emit_step(self, kind: type[BaseEvent], agent: str, symbol: str, **fields: Any) -> None:
        self.emit(kind(run_id=self.run_id, agent=agent, symbol=symbol, **fields))


def _unless_stopped(next_node: str) -> Callable[[CspState], str]:
    def route(state: CspState) -> str:
        return "finish" if "verdict" in state else next_node

    return route


def _after_options(state: CspState) -> str:
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


def _report(agent: str, result: RunResult[Any], seconds: float) -> AgentReport:
    return AgentReport(
        agent=agent,
        model=result.model,
        outcome=result.outcome.kind,
        reason=result.outcome.reason,
        tool_calls=result.tool_calls,
        requests=result.usage.requests,
        tokens=result.usage.total_tokens,
        cost_usd=result.usage.cost_usd,
        seconds=round(seconds, 3),
    )


def _missing(result: RunResult[Any]) -> list[str]:
    """What data the tools said was missing, as ``tool: item`` lines."""
    found: list[str] = []
    for message in result.messages:
        if not isinstance(message, ToolMessage):
            continue
        try:
            body = json.loads(text_of(message.content))
        except json.JSONDecodeError:
            continue
        if isinstance(body, dict):
            found += [f"{message.name}: {item}" for item in body.get("missing") or []]
    return found

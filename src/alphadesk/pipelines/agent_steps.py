"""Running one agent as a step of a pipeline, the same way in every pipeline.

A step resolves the agent's model (per agent, per tier, or the run's override), runs it at
the request's depth under the run's budgets and ledger, announces itself with step events,
and turns how it ended into an ``AgentReport``, the data its tools said was missing, and a
failure or rejection reason for the graph to route on.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

from alphadesk.agent import Agent, Completed, RunResult, RunScope, UsageLimits
from alphadesk.agent.events import BaseEvent, EventSink
from alphadesk.agents.spec import AgentSpec, configured, model_for
from alphadesk.agents.task import AgentTask
from alphadesk.config import Settings
from alphadesk.data.errors import DataError
from alphadesk.llm.base import Model
from alphadesk.llm.messages import AssistantMessage, ContentPart, ToolMessage, text_of
from alphadesk.pipelines.base import PipelineRun
from alphadesk.pipelines.events import StepFinished, StepStarted
from alphadesk.pipelines.models import AgentReport, PipelineRequest

__all__ = [
    "AgentModels",
    "AgentSteps",
    "StepOutcome",
    "ToolRead",
]

OutputT = TypeVar("OutputT")


class AgentModels:
    """The model each agent runs with, resolved once per agent and then reused.

    An explicit ``models`` entry wins (tests, benchmarks), then ``override`` for every
    agent (``--model``), then the agent's per-agent or tier setting.
    """

    def __init__(
        self,
        settings: Settings,
        specs: Iterable[AgentSpec[Any, Any]],
        *,
        override: str | None = None,
        models: Mapping[str, Model] | None = None,
    ) -> None:
        self._settings, self._override = settings, override
        self._specs = {spec.name: spec for spec in specs}
        self._models = dict(models or {})

    def __call__(self, agent: str) -> Model:
        if agent not in self._models:
            if agent not in self._specs:
                raise KeyError(f"no agent {agent!r}; the agents are {sorted(self._specs)}")
            self._models[agent] = model_for(self._specs[agent], self._settings, self._override)
        return self._models[agent]

    @property
    def settings(self) -> Settings:
        return self._settings

    def resolved(self) -> dict[str, Model]:
        """Every agent's model, resolved now (a bad model name fails here, not mid-run)."""
        return {agent: self(agent) for agent in self._specs}

    def label(self, agents: Iterable[str]) -> str:
        """The models these agents run with, e.g. ``rules`` or ``openai/gpt-4o``."""
        return ", ".join(sorted({self(agent).name for agent in agents}))


@dataclass(frozen=True)
class ToolRead:
    """One tool call of a step: the tool, its arguments as sent, what it returned."""

    tool: str
    arguments: str
    result: str


@dataclass(frozen=True)
class StepOutcome(Generic[OutputT]):
    """How one agent step ended. ``failure`` and ``rejection`` name the agent; ``reads``
    are its tool calls in the order made."""

    agent: str
    output: OutputT | None
    report: AgentReport | None
    missing: list[str] = field(default_factory=list)
    failure: str | None = None
    rejection: str | None = None
    reads: list[ToolRead] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.failure is None


class AgentSteps:
    """Runs agents as steps of one run: models, budgets, ledger and events bound once."""

    def __init__(self, run: PipelineRun, models: AgentModels, limits: UsageLimits) -> None:
        self.pipeline_run, self.models, self.limits = run, models, limits

    async def run(
        self,
        spec: AgentSpec[Any, OutputT],
        prompt: AgentTask | str | list[ContentPart],
        deps: Any,
        request: PipelineRequest,
        *,
        rejection: Callable[[OutputT], str | None] | None = None,
    ) -> StepOutcome[OutputT]:
        """Run ``spec`` on ``prompt`` (a task object, or plain text); ``rejection`` says why
        its output stops the pipeline."""
        model = self.model(spec.name)
        self._announce(StepStarted, spec.name, request.symbol, model=model.name)
        started = time.monotonic()
        try:
            agent = configured(spec.at_depth(request.depth), self.models.settings)
            result = await self._run(agent, model, prompt, deps, request.as_of)
        except DataError as exc:  # the data the validators check against is unavailable
            failure = f"{spec.name}: {type(exc).__name__}: {exc}"
            self._finished(spec.name, request.symbol, "failed", failure)
            return StepOutcome(spec.name, None, None, failure=failure)
        report = agent_report(spec.name, result, time.monotonic() - started)
        missing = tools_missing(result)
        if not isinstance(result.outcome, Completed):
            failure = f"{spec.name}: {result.outcome.reason}"
            self._finished(spec.name, request.symbol, "failed", failure)
            return StepOutcome(spec.name, None, report, missing, failure=failure)
        why = rejection(result.output) if rejection is not None else None
        self._finished(spec.name, request.symbol, "rejected" if why else "completed", why)
        reads = tool_reads(result)
        return StepOutcome(spec.name, result.output, report, missing, rejection=why, reads=reads)

    def model(self, agent: str) -> Model:
        """The model ``agent`` runs with in this run (through the run's journal)."""
        return self.pipeline_run.model(self.models(agent))

    async def call(
        self,
        name: str,
        agent: Agent[Any, OutputT],
        prompt: AgentTask | str | list[ContentPart],
        deps: Any,
        *,
        as_of: datetime,
        on_event: EventSink | None = None,
    ) -> RunResult[OutputT]:
        """Run ``agent``, built by the caller, with the model of ``name`` under this run's
        budgets and ledger, and return how it ended as it is: for a pipeline that reads
        more of the run than its output (the assistant's tool messages), and announces
        its own steps. Events go to ``on_event`` (default: the run's)."""
        return await self._run(agent, self.model(name), prompt, deps, as_of, on_event)

    async def _run(
        self,
        agent: Agent[Any, OutputT],
        model: Model,
        prompt: AgentTask | str | list[ContentPart],
        deps: Any,
        as_of: datetime,
        on_event: EventSink | None = None,
    ) -> RunResult[OutputT]:
        return await agent.run(
            model,
            prompt.message() if isinstance(prompt, AgentTask) else prompt,
            deps=deps,
            scope=RunScope(
                as_of=as_of,
                run_id=self.pipeline_run.run_id,
                ledger=self.pipeline_run.ledger,
                limits=self.limits,
                on_event=on_event or self.pipeline_run.emit,
            ),
        )

    def _finished(self, agent: str, symbol: str, status: str, reason: str | None) -> None:
        self._announce(StepFinished, agent, symbol, status=status, reason=reason)

    def _announce(self, kind: type[BaseEvent], agent: str, symbol: str, **fields: Any) -> None:
        self.pipeline_run.emit(
            kind(run_id=self.pipeline_run.run_id, agent=agent, symbol=symbol, **fields)
        )


def agent_report(agent: str, result: RunResult[Any], seconds: float) -> AgentReport:
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


def tool_reads(result: RunResult[Any]) -> list[ToolRead]:
    """Each tool call of ``result`` with what it returned, in the order made."""
    returned = {
        m.tool_call_id: text_of(m.content) for m in result.messages if isinstance(m, ToolMessage)
    }
    return [
        ToolRead(call.name, call.arguments, returned.get(call.id, ""))
        for m in result.messages
        if isinstance(m, AssistantMessage)
        for call in m.tool_calls
    ]


def tools_missing(result: RunResult[Any]) -> list[str]:
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

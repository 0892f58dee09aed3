"""The trading desk's graph nodes: each runs its agents as steps and returns a state update.

A debate goes in rounds of two steps, the speakers of each step concurrently: all state
their case (after the first round answering the others' last rebuttals), then each
answers the others' arguments of the same round. Nobody waits for a turn it does not
answer, and nobody's case goes unanswered.

Nodes read and write the typed state (``DeskState``); the graph keeps it as JSON, converted
at each node by ``DESK_STATE``. A task's data is JSON (what its template renders and its
rules policy reads), made from the typed state where the task is built.
"""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel
from typing_extensions import TypedDict  # pydantic reads a TypedDict of it on Python 3.11

from alphadesk.agent import ModelRetry, RunContext
from alphadesk.agents.desk import DeskAgents, DeskDeps
from alphadesk.agents.desk.facts import briefing, fact_sheet, situation_text
from alphadesk.agents.desk.models import (
    AnalystName,
    AnalystReport,
    DebateTurn,
    FinalDecision,
    FundamentalsReport,
    InvestmentPlan,
    MarketReport,
    NewsReport,
    PastSituation,
    RiskView,
    SentimentReport,
    TradeProposal,
)
from alphadesk.agents.desk.tasks import (
    DeskTask,
    FundamentalsTask,
    JudgeTask,
    ManagerTask,
    MarketTask,
    NewsTask,
    RebuttalTask,
    ResearcherTask,
    RiskRebuttalTask,
    RiskTask,
    SentimentTask,
    TraderTask,
)
from alphadesk.agents.spec import AgentSpec
from alphadesk.data.base import MarketData
from alphadesk.data.errors import DataError
from alphadesk.pipelines.agent_steps import AgentSteps, StepOutcome
from alphadesk.pipelines.base import NodeFunction, PipelineRun, StateCodec
from alphadesk.pipelines.desk.memory import DeskMemory, past_situation
from alphadesk.pipelines.desk.models import DebateEntry, DeskRequest, DeskResult, RiskEntry
from alphadesk.pipelines.desk.reflection import reflect
from alphadesk.pipelines.desk.reuse import AnalystReports
from alphadesk.pipelines.events import DebateMessage
from alphadesk.pipelines.models import AgentReport, Failure
from alphadesk.store import RunStore
from alphadesk.tools.chart.render import render_chart
from alphadesk.tools.deps import ToolDeps

__all__ = ["DESK_STATE", "DeskNodeDeps", "DeskNodes", "DeskState"]

_RECALL = 2  # past situations shown to each speaker
_REUSED = "its report of an earlier day: every tool read the same as then"
_TASKS: dict[AnalystName, type[DeskTask]] = {
    "market": MarketTask,
    "sentiment": SentimentTask,
    "news": NewsTask,
    "fundamentals": FundamentalsTask,
}
_OPPONENT: dict[Literal["bull", "bear"], Literal["bull", "bear"]] = {"bull": "bear", "bear": "bull"}

Part = Literal["argument", "rebuttal"]
Json = dict[str, Any]  # a task's data, as its template renders it
Entry = DebateEntry | RiskEntry


def _first(first: Any, second: Any) -> Any:
    return first or second  # the first failure is the one that stopped the run


class DeskState(TypedDict, total=False):
    """Graph state, typed; the graph keeps it as JSON (``DESK_STATE``) so every checkpoint
    can be stored and an interrupted run resumed."""

    market: MarketReport
    sentiment: SentimentReport
    news: NewsReport
    fundamentals: FundamentalsReport
    facts: dict[str, float]
    situation: str
    memories: list[PastSituation]
    chart: str
    debate: Annotated[list[DebateEntry], operator.add]
    plan: InvestmentPlan
    proposal: TradeProposal
    risk_debate: Annotated[list[RiskEntry], operator.add]
    final: FinalDecision
    verdict: Annotated[Failure, _first]  # named after the failed agent
    reports: Annotated[list[AgentReport], operator.add]
    missing: Annotated[list[str], operator.add]
    result: DeskResult


DESK_STATE = StateCodec(DeskState)
Said = tuple[DeskState, Entry | None]  # a speaker's bookkeeping and its entry


def _said(entry: Entry) -> BaseModel:
    return entry.turn if isinstance(entry, DebateEntry) else entry.view


def _flat(entry: Entry) -> Json:
    """A spoken turn as the next speakers read it: who, which round, argument or
    rebuttal, and what was said."""
    head = {"speaker": entry.speaker, "round": entry.round, "part": entry.part}
    return head | _said(entry).model_dump(mode="json")


def _rounds(entries: list[DebateEntry] | list[RiskEntry]) -> int:
    """The rounds begun so far."""
    return len({entry.round for entry in entries})


def _latest(entries: list[DebateEntry] | list[RiskEntry]) -> dict[str, Json]:
    """Each speaker's last turn."""
    return {entry.speaker: _flat(entry) for entry in entries}


def _arguments(entries: list[DebateEntry] | list[RiskEntry], number: int) -> dict[str, Json]:
    """Each speaker's argument of round ``number``."""
    return {
        entry.speaker: _flat(entry)
        for entry in entries
        if entry.round == number and entry.part == "argument"
    }


def _json(output: BaseModel) -> Json:
    return output.model_dump(mode="json")


def _recalled(memory: PastSituation) -> Json:
    """A recollection as the agents read it: what was learnt, not the memory's key (it
    names a run, so a walk that learns again could not replay its prompts)."""
    return memory.model_dump(mode="json", exclude={"id"})


def _announced(output: DebateTurn | RiskView, part: Part) -> str:
    """What the event stream shows of a turn: an argument (with its answer to the last
    rebuttals, if any), or a rebuttal."""
    if part == "argument":
        text = output.argument
        text += f" Answering the last rebuttal: {output.rebuttal}" if output.rebuttal else ""
    else:
        text = output.rebuttal or output.argument
    if isinstance(output, RiskView):
        text = f"{output.stance} at size {output.recommended_size:.2f}: {text}"
    return text


def _bookkeeping(
    step: StepOutcome[Any], output: AnalystName | Literal["plan", "proposal", "final"] | None = None
) -> DeskState:
    """A step's missing data, report and failure, and its output under ``output``."""
    update: DeskState = {"missing": step.missing}
    if output is not None and step.output is not None:
        update[output] = step.output
    if step.report is not None:
        update["reports"] = [step.report]
    if step.failure is not None:
        update["verdict"] = Failure(stage=step.agent, reason=step.failure)
    return update


async def _together(speakers: list[Awaitable[Said]]) -> tuple[DeskState, list[Entry]]:
    """The bookkeeping of one step of concurrent speakers, and their entries in speaking
    order."""
    said = await asyncio.gather(*speakers)
    combined: DeskState = {"missing": [], "reports": []}
    entries: list[Entry] = []
    for update, entry in said:
        combined["missing"] += update["missing"]
        combined["reports"] += update.get("reports", [])
        if "verdict" in update and "verdict" not in combined:
            combined["verdict"] = update["verdict"]
        if entry is not None:
            entries.append(entry)
    return combined, entries


@dataclass(frozen=True)
class DeskNodeDeps:
    """What the nodes of one run need: the agents, the market, the memory of past decisions
    (None when off) and the run store it reflects on, the agent steps (models, budgets,
    ledger and events bound to the run), the run itself, and whether it may write to the
    memory (never while replaying: a replay repeats a run, it writes nothing new; nor when
    the settings leave reflecting to an evaluation's walk)."""

    agents: DeskAgents
    market: MarketData
    memory: DeskMemory | None
    store: RunStore
    steps: AgentSteps
    run: PipelineRun
    writes_memory: bool
    reports: AnalystReports | None = None  # reused while their inputs are unchanged


@dataclass(frozen=True)
class DeskNodes:
    """The graph's nodes for one request, bound to their dependencies."""

    deps: DeskNodeDeps
    request: DeskRequest

    def node(self, name: str) -> NodeFunction:
        """The function of the graph node ``name``."""
        if name in _TASKS:
            return DESK_STATE.node(_AnalystNode(self, name))
        return DESK_STATE.node(getattr(self, name))

    @property
    def memory(self) -> DeskMemory | None:
        """The memory this run recalls from, if its request asks for one."""
        return self.deps.memory if self.request.memory else None

    def _task(self, kind: type[DeskTask], facts: dict[str, float], **context: Any) -> Any:
        """The task of ``kind`` on the request's symbol and date, showing ``facts``."""
        return kind(symbol=self.request.symbol, as_of=self.request.as_of, facts=facts, **context)

    def _reports(self, state: DeskState) -> dict[str, AnalystReport]:
        """The analysts' reports, in the request's order of analysts."""
        found: Mapping[str, Any] = state
        return {name: found[name] for name in self.request.analysts if name in found}

    async def _run(
        self, spec: AgentSpec[DeskDeps, Any], task: DeskTask, facts: dict[str, float]
    ) -> StepOutcome[Any]:
        """Run ``spec`` on ``task``; the validators check every citation against ``facts``
        (the whole sheet, even when the task shows none of it: a rebuttal answers with the
        facts the arguments cite, which saves the sheet's ~1.8k tokens)."""
        return await self.deps.steps.run(spec, task, self._deps(facts), self.request)

    def _deps(self, facts: dict[str, float]) -> DeskDeps:
        run_dir = self.deps.run.run_dir
        return DeskDeps(
            market=self.deps.market, run_dir=run_dir, symbol=self.request.symbol, facts=facts
        )

    def _spoke(self, step: StepOutcome[Any], speaker: Any, number: int, part: Part) -> Said:
        """A debater's step as bookkeeping and its debate entry, announced as it is said."""
        update, output = _bookkeeping(step), step.output
        if output is None:
            return update, None
        investment = isinstance(output, DebateTurn)
        numbers = (
            {"conviction": output.conviction} if investment else {"size": output.recommended_size}
        )
        self.deps.run.emit(
            DebateMessage(
                run_id=self.deps.run.run_id,
                agent=speaker,
                symbol=self.request.symbol,
                debate="investment" if investment else "risk",
                round=number,
                part=part,
                text=_announced(output, part),
                **numbers,
            )
        )
        entry: Entry = (
            DebateEntry(speaker=speaker, round=number, part=part, turn=output)
            if investment
            else RiskEntry(speaker=speaker, round=number, part=part, view=output)
        )
        return update, entry

    # -- analysts, reflection, briefing ---------------------------------------------------

    async def run_analyst(self, name: AnalystName, state: DeskState) -> DeskState:
        spec, reports, request = self.deps.agents.analysts[name], self.deps.reports, self.request
        if reports is not None:
            run_id = self.deps.run.run_id
            kept = await reports.find(spec, request.symbol, self._deps({}), request.as_of, run_id)
            if kept is not None:
                model = self.deps.steps.model(spec.name).name
                report = AgentReport(agent=spec.name, model=model, outcome="reused", reason=_REUSED)
                output, missing = kept.at(request.as_of)
                update: DeskState = {"missing": missing, "reports": [report]}
                update[name] = output
                return update
        step = await self._run(spec, self._task(_TASKS[name], {}), {})
        if reports is not None:
            reports.keep(request.symbol, request.as_of, step)
        return _bookkeeping(step, name)

    async def reflect(self, state: DeskState) -> DeskState:
        deps = self.deps
        if self.memory is None or not deps.writes_memory:
            return {"missing": []}
        written = await reflect(
            self.memory, deps.store, deps.market, self.request.as_of, deps.run.run_id
        )
        for event in written:
            deps.run.emit(event)
        return {"missing": []}

    async def chart(self, state: DeskState) -> DeskState:
        """Draw the report's chart alongside the analysts (off the critical path), when the
        run's report wants charts."""
        run_dir, request = self.deps.run.run_dir, self.request
        if run_dir is None or not self.deps.run.charts:
            return {"missing": []}
        ctx = RunContext(
            deps=ToolDeps(market=self.deps.market, run_dir=run_dir),
            as_of=request.as_of,
            run_id=self.deps.run.run_id,
            agent="desk",
        )
        try:
            image = await render_chart.function(ctx, request.symbol, "6mo")
        except (DataError, ModelRetry) as exc:
            return {"missing": [f"chart: {exc}"]}
        return {"chart": image.value.file, "missing": []}

    async def brief(self, state: DeskState) -> DeskState:
        if state.get("verdict"):
            return {"missing": []}
        request, reports = self.request, self._reports(state)
        situation = situation_text(reports)
        memories: list[PastSituation] = []
        if self.memory is not None:
            recalled = await asyncio.to_thread(
                self.memory.recall, request.symbol, situation, as_of=request.as_of, k=_RECALL
            )
            memories = [past_situation(item) for item in recalled]
        return {"facts": fact_sheet(reports), "situation": situation, "memories": memories}

    def _briefing(self, state: DeskState) -> dict[str, Json]:
        """What later stages read of each analyst (made from the reports where needed)."""
        return briefing(self._reports(state))

    # -- the investment debate, plan and proposal -----------------------------------------

    async def debate(self, state: DeskState) -> DeskState:
        """Bull and bear state their cases at once; after the first round each answers
        the other's rebuttal of the round before."""
        spoken = state.get("debate", [])
        number, last = _rounds(spoken) + 1, _latest(spoken)
        shown = {
            "briefing": self._briefing(state),
            "memories": [_recalled(m) for m in state.get("memories", [])],
        }

        async def speak(stance: Literal["bull", "bear"]) -> Said:
            task = self._task(
                ResearcherTask,
                state["facts"],
                round=number,
                rounds=self.request.rounds,
                stance=stance,
                opponent=_OPPONENT[stance],
                opponent_turn=last.get(_OPPONENT[stance]),
                **shown,
            )
            step = await self._run(self.deps.agents.researchers[stance], task, state["facts"])
            return self._spoke(step, stance, number, "argument")

        update, entries = await _together([speak(stance) for stance in _OPPONENT])
        return update | {"debate": entries}  # type: ignore[return-value]

    async def rebuttal(self, state: DeskState) -> DeskState:
        """Bull and bear each answer the other's argument of this round, at once."""
        spoken = state["debate"]
        number = _rounds(spoken)
        argued = _arguments(spoken, number)

        async def speak(stance: Literal["bull", "bear"]) -> Said:
            task = self._task(
                RebuttalTask,
                {},
                round=number,
                rounds=self.request.rounds,
                stance=stance,
                opponent=_OPPONENT[stance],
                own_turn=argued[stance],
                opponent_turn=argued[_OPPONENT[stance]],
            )
            step = await self._run(self.deps.agents.researchers[stance], task, state["facts"])
            return self._spoke(step, stance, number, "rebuttal")

        update, entries = await _together([speak(stance) for stance in _OPPONENT])
        return update | {"debate": entries}  # type: ignore[return-value]

    async def manager(self, state: DeskState) -> DeskState:
        task = self._task(
            ManagerTask,
            state["facts"],
            briefing=self._briefing(state),
            debate=[_flat(entry) for entry in state.get("debate", [])],
        )
        step = await self._run(self.deps.agents.manager, task, state["facts"])
        return _bookkeeping(step, "plan")

    async def trader(self, state: DeskState) -> DeskState:
        task = self._task(
            TraderTask,
            state["facts"],
            plan=_json(state["plan"]),
            memories=[_recalled(m) for m in state.get("memories", [])],
        )
        step = await self._run(self.deps.agents.trader, task, state["facts"])
        return _bookkeeping(step, "proposal")

    # -- the risk discussion and the final decision ---------------------------------------

    async def risk(self, state: DeskState) -> DeskState:
        """The three risk analysts give their views at once; after the first round each
        answers the other two's rebuttals of the round before."""
        spoken = state.get("risk_debate", [])
        number, last = _rounds(spoken) + 1, _latest(spoken)
        proposal, shown = _json(state["proposal"]), self._briefing(state)

        async def speak(persona: str) -> Said:
            task = self._task(
                RiskTask,
                state["facts"],
                round=number,
                rounds=self.request.risk_rounds,
                persona=persona,
                proposal=proposal,
                briefing=shown,
                others={name: view for name, view in last.items() if name != persona} or None,
            )
            step = await self._run(self.deps.agents.risk[persona], task, state["facts"])
            return self._spoke(step, persona, number, "argument")

        update, entries = await _together([speak(p) for p in self.deps.agents.risk])
        return update | {"risk_debate": entries}  # type: ignore[return-value]

    async def risk_rebuttal(self, state: DeskState) -> DeskState:
        """Each risk analyst answers the other two's views of this round, at once."""
        spoken = state["risk_debate"]
        number = _rounds(spoken)
        views, proposal = _arguments(spoken, number), _json(state["proposal"])

        async def speak(persona: str) -> Said:
            task = self._task(
                RiskRebuttalTask,
                {},
                round=number,
                rounds=self.request.risk_rounds,
                persona=persona,
                proposal=proposal,
                own_view=views[persona],
                others={name: view for name, view in views.items() if name != persona},
            )
            step = await self._run(self.deps.agents.risk[persona], task, state["facts"])
            return self._spoke(step, persona, number, "rebuttal")

        update, entries = await _together([speak(p) for p in self.deps.agents.risk])
        return update | {"risk_debate": entries}  # type: ignore[return-value]

    async def judge(self, state: DeskState) -> DeskState:
        task = self._task(
            JudgeTask,
            state["facts"],
            proposal=_json(state["proposal"]),
            plan=_json(state["plan"]),
            risk_debate=[_flat(entry) for entry in state.get("risk_debate", [])],
            memories=[_recalled(m) for m in state.get("memories", [])],
        )
        step = await self._run(self.deps.agents.judge, task, state["facts"])
        return _bookkeeping(step, "final")

    async def finish(self, state: DeskState) -> DeskState:
        request = self.request
        fields: dict[str, Any] = self._reports(state)
        for key in ("facts", "situation", "memories", "plan", "proposal", "final"):
            if key in state:
                fields[key] = state[key]
        result = DeskResult(
            **fields,
            symbol=request.symbol,
            as_of=request.as_of,
            decision="failed",
            agents=state.get("reports", []),
            data_missing=sorted(set(state.get("missing", []))),
            run_id=self.deps.run.run_id,
            chart=state.get("chart"),
            debate=state.get("debate", []),
            risk_debate=state.get("risk_debate", []),
        )
        verdict = state.get("verdict")
        if verdict:
            failed = {"stage": verdict.stage, "reason": verdict.reason, "final": None}
            result = result.model_copy(update=failed)
        elif result.final is not None:
            result = result.model_copy(update={"decision": result.final.action})
        else:
            result = result.model_copy(update={"stage": "judge", "reason": "no decision reached"})
        return {"result": result}


@dataclass(frozen=True)
class _AnalystNode:
    """The node of one analyst (a graph node is called with the state alone)."""

    nodes: DeskNodes
    name: AnalystName

    async def __call__(self, state: DeskState) -> DeskState:
        return await self.nodes.run_analyst(self.name, state)

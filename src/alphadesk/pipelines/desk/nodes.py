"""The trading desk's graph nodes: each runs its agents as steps and returns a state update.

A debate goes in exchanges of two steps, the speakers of each step concurrently: all state
their case (after the first exchange answering the others' last rebuttals), then each
answers the others' arguments of the same exchange. Nobody waits for a turn it does not
answer, and nobody's case goes unanswered.
"""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypedDict

from pydantic import BaseModel

from alphadesk.agent import ModelRetry, RunContext
from alphadesk.agents.desk import DeskAgents, DeskDeps
from alphadesk.agents.desk.facts import briefing, fact_sheet, situation_text
from alphadesk.agents.desk.models import (
    AnalystReport,
    DebateTurn,
    FundamentalsReport,
    MarketReport,
    NewsReport,
    RiskView,
    SentimentReport,
)
from alphadesk.agents.spec import AgentSpec
from alphadesk.data.base import MarketData
from alphadesk.data.errors import DataError
from alphadesk.pipelines.agent_steps import AgentSteps, StepOutcome
from alphadesk.pipelines.base import NodeFunction, PipelineRun
from alphadesk.pipelines.desk.memory import DeskMemory, past_situation
from alphadesk.pipelines.desk.models import DeskRequest, DeskResult
from alphadesk.pipelines.desk.reflection import reflect
from alphadesk.pipelines.events import DebateMessage
from alphadesk.store import RunStore
from alphadesk.tools.chart.render import render_chart
from alphadesk.tools.deps import ToolDeps

__all__ = ["DeskNodeDeps", "DeskNodes", "DeskState"]

_RECALL = 2  # past situations shown to each speaker
_REPORTS: dict[str, type[AnalystReport]] = {
    "market": MarketReport,
    "sentiment": SentimentReport,
    "news": NewsReport,
    "fundamentals": FundamentalsReport,
}
_OPPONENT = {"bull": "bear", "bear": "bull"}

Part = Literal["argument", "rebuttal"]
Said = tuple[dict[str, Any], dict[str, Any] | None]  # a speaker's bookkeeping and its entry


def _merge(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    return {**first, **second}


def _first(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    return first or second  # the first failure is the one that stopped the run


class DeskState(TypedDict, total=False):
    """Graph state; plain JSON so every checkpoint can be stored and resumed."""

    request: dict[str, Any]
    analysts: Annotated[dict[str, dict[str, Any]], _merge]
    facts: dict[str, float]
    briefing: dict[str, Any]
    situation: str
    memories: list[dict[str, Any]]
    chart: str
    debate: Annotated[list[dict[str, Any]], operator.add]
    plan: dict[str, Any]
    proposal: dict[str, Any]
    risk_debate: Annotated[list[dict[str, Any]], operator.add]
    final: dict[str, Any]
    verdict: Annotated[dict[str, Any], _first]  # {"stage": ..., "reason": ...} on a failure
    reports: Annotated[list[dict[str, Any]], operator.add]
    missing: Annotated[list[str], operator.add]
    result: dict[str, Any]


def _flat(entry: dict[str, Any], key: str) -> dict[str, Any]:
    """A spoken turn as the next speakers read it: who, which exchange, argument or
    rebuttal, and what was said."""
    part = entry.get("part", "argument")
    return {"speaker": entry["speaker"], "round": entry["round"], "part": part, **entry[key]}


def _exchanges(entries: list[dict[str, Any]]) -> int:
    """The exchanges begun so far (an entry's ``round`` is its exchange)."""
    return len({entry["round"] for entry in entries})


def _latest(entries: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    """Each speaker's last turn."""
    return {entry["speaker"]: _flat(entry, key) for entry in entries}


def _arguments(entries: list[dict[str, Any]], key: str, exchange: int) -> dict[str, Any]:
    """Each speaker's argument of ``exchange``."""
    return {
        entry["speaker"]: _flat(entry, key)
        for entry in entries
        if entry["round"] == exchange and entry.get("part", "argument") == "argument"
    }


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


def _bookkeeping(step: StepOutcome[Any]) -> dict[str, Any]:
    update: dict[str, Any] = {"missing": step.missing}
    if step.report is not None:
        update["reports"] = [step.report.model_dump()]
    if step.failure is not None:
        update["verdict"] = {"stage": step.agent, "reason": step.failure}
    return update


async def _together(key: str, speakers: list[Awaitable[Said]]) -> dict[str, Any]:
    """The update of one step of concurrent speakers, their entries in speaking order."""
    said = await asyncio.gather(*speakers)
    combined: dict[str, Any] = {"missing": [], "reports": [], key: []}
    for update, entry in said:
        combined["missing"] += update["missing"]
        combined["reports"] += update.get("reports", [])
        if "verdict" in update and "verdict" not in combined:
            combined["verdict"] = update["verdict"]
        if entry is not None:
            combined[key].append(entry)
    return combined


@dataclass(frozen=True)
class DeskNodeDeps:
    """What the nodes of one run need: the agents, the market, the memory of past decisions
    (None when off) and the run store it reflects on, the agent steps (models, budgets,
    ledger and events bound to the run), the run itself, and whether it may write to the
    memory (never while replaying: a replay repeats a run, it writes nothing new)."""

    agents: DeskAgents
    market: MarketData
    memory: DeskMemory | None
    store: RunStore
    steps: AgentSteps
    run: PipelineRun
    writes_memory: bool


@dataclass(frozen=True)
class DeskNodes:
    """The graph's nodes for one request, bound to their dependencies."""

    deps: DeskNodeDeps
    request: DeskRequest

    def node(self, name: str) -> NodeFunction:
        """The function of the graph node ``name``."""
        if name in self.deps.agents.analysts:
            return _AnalystNode(self, name)
        node: NodeFunction = getattr(self, name)
        return node

    @property
    def memory(self) -> DeskMemory | None:
        """The memory this run recalls from, if its request asks for one."""
        return self.deps.memory if self.request.memory else None

    async def _run(
        self,
        spec: AgentSpec[DeskDeps, Any],
        facts: dict[str, float],
        *,
        sheet: bool = True,
        **context: Any,
    ) -> StepOutcome[Any]:
        """Run ``spec`` on its task filled with ``context`` and, unless ``sheet`` is false,
        the fact sheet (a rebuttal answers with the facts the arguments cite, which saves
        the sheet's ~1.8k tokens); the validators check every citation against the sheet."""
        request, run = self.request, self.deps.run
        shown = facts if sheet else {}
        prompt = DeskAgents.prompt(spec.name, request.symbol, request.as_of, facts=shown, **context)
        deps = DeskDeps(
            market=self.deps.market, run_dir=run.run_dir, symbol=request.symbol, facts=facts
        )
        return await self.deps.steps.run(spec, prompt, deps, request)

    def _spoke(self, step: StepOutcome[Any], speaker: str, exchange: int, part: Part) -> Said:
        """A debater's step as bookkeeping and its debate entry, announced as it is said."""
        update, output = _bookkeeping(step), step.output
        if output is None:
            return update, None
        investment = isinstance(output, DebateTurn)
        key, numbers = (
            ("turn", {"conviction": output.conviction})
            if investment
            else ("view", {"size": output.recommended_size})
        )
        self.deps.run.emit(
            DebateMessage(
                run_id=self.deps.run.run_id,
                agent=speaker,
                symbol=self.request.symbol,
                debate="investment" if investment else "risk",
                round=exchange,
                part=part,
                text=_announced(output, part),
                **numbers,
            )
        )
        entry = {"speaker": speaker, "round": exchange, "part": part}
        return update, entry | {key: output.model_dump(mode="json")}

    # -- analysts, reflection, briefing ---------------------------------------------------

    async def run_analyst(self, name: str, state: DeskState) -> dict[str, Any]:
        step = await self._run(self.deps.agents.analysts[name], {})
        update = _bookkeeping(step)
        if step.output is not None:
            update["analysts"] = {name: step.output.model_dump(mode="json")}
        return update

    async def reflect(self, state: DeskState) -> dict[str, Any]:
        deps = self.deps
        if self.memory is None or not deps.writes_memory:
            return {"missing": []}
        written = await reflect(
            self.memory, deps.store, deps.market, self.request.as_of, deps.run.run_id
        )
        for event in written:
            deps.run.emit(event)
        return {"missing": []}

    async def chart(self, state: DeskState) -> dict[str, Any]:
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

    async def brief(self, state: DeskState) -> dict[str, Any]:
        if state.get("verdict"):
            return {"missing": []}
        request, found = self.request, state.get("analysts", {})
        reports: dict[str, AnalystReport] = {
            name: _REPORTS[name].model_validate(found[name])
            for name in request.analysts
            if name in found
        }
        situation = situation_text(reports)
        memories: list[dict[str, Any]] = []
        if self.memory is not None:
            recalled = await asyncio.to_thread(
                self.memory.recall, request.symbol, situation, as_of=request.as_of, k=_RECALL
            )
            memories = [past_situation(item).model_dump(mode="json") for item in recalled]
        return {
            "facts": fact_sheet(reports),
            "briefing": briefing(reports),
            "situation": situation,
            "memories": memories,
        }

    # -- the investment debate, plan and proposal -----------------------------------------

    async def debate(self, state: DeskState) -> dict[str, Any]:
        """Bull and bear state their cases at once; after the first exchange each answers
        the other's rebuttal of the exchange before."""
        spoken = state.get("debate", [])
        exchange, last = _exchanges(spoken) + 1, _latest(spoken, "turn")

        async def speak(stance: str) -> Said:
            step = await self._run(
                self.deps.agents.researchers[stance],
                state["facts"],
                exchange=exchange,
                exchanges=self.request.max_debate_rounds,
                stance=stance,
                opponent=_OPPONENT[stance],
                briefing=state["briefing"],
                opponent_turn=last.get(_OPPONENT[stance]),
                memories=state.get("memories", []),
            )
            return self._spoke(step, stance, exchange, "argument")

        return await _together("debate", [speak(stance) for stance in _OPPONENT])

    async def rebuttal(self, state: DeskState) -> dict[str, Any]:
        """Bull and bear each answer the other's argument of this exchange, at once."""
        spoken = state["debate"]
        exchange = _exchanges(spoken)
        argued = _arguments(spoken, "turn", exchange)

        async def speak(stance: str) -> Said:
            step = await self._run(
                self.deps.agents.researchers[stance],
                state["facts"],
                sheet=False,
                task="rebuttal",
                exchange=exchange,
                exchanges=self.request.max_debate_rounds,
                stance=stance,
                opponent=_OPPONENT[stance],
                own_turn=argued[stance],
                opponent_turn=argued[_OPPONENT[stance]],
            )
            return self._spoke(step, stance, exchange, "rebuttal")

        return await _together("debate", [speak(stance) for stance in _OPPONENT])

    async def manager(self, state: DeskState) -> dict[str, Any]:
        debate = [_flat(entry, "turn") for entry in state.get("debate", [])]
        step = await self._run(
            self.deps.agents.manager,
            state["facts"],
            briefing=state["briefing"],
            debate=debate,
        )
        return _bookkeeping(step) | _output("plan", step.output)

    async def trader(self, state: DeskState) -> dict[str, Any]:
        step = await self._run(
            self.deps.agents.trader,
            state["facts"],
            plan=state["plan"],
            memories=state.get("memories", []),
        )
        return _bookkeeping(step) | _output("proposal", step.output)

    # -- the risk discussion and the final decision ---------------------------------------

    async def risk(self, state: DeskState) -> dict[str, Any]:
        """The three risk analysts give their views at once; after the first exchange each
        answers the other two's rebuttals of the exchange before."""
        spoken = state.get("risk_debate", [])
        exchange, last = _exchanges(spoken) + 1, _latest(spoken, "view")

        async def speak(persona: str) -> Said:
            step = await self._run(
                self.deps.agents.risk[persona],
                state["facts"],
                exchange=exchange,
                exchanges=self.request.max_risk_discuss_rounds,
                persona=persona,
                proposal=state["proposal"],
                briefing=state["briefing"],
                others={name: view for name, view in last.items() if name != persona} or None,
            )
            return self._spoke(step, persona, exchange, "argument")

        return await _together("risk_debate", [speak(p) for p in self.deps.agents.risk])

    async def risk_rebuttal(self, state: DeskState) -> dict[str, Any]:
        """Each risk analyst answers the other two's views of this exchange, at once."""
        spoken = state["risk_debate"]
        exchange = _exchanges(spoken)
        views = _arguments(spoken, "view", exchange)

        async def speak(persona: str) -> Said:
            step = await self._run(
                self.deps.agents.risk[persona],
                state["facts"],
                sheet=False,
                task="risk_rebuttal",
                exchange=exchange,
                exchanges=self.request.max_risk_discuss_rounds,
                persona=persona,
                proposal=state["proposal"],
                own_view=views[persona],
                others={name: view for name, view in views.items() if name != persona},
            )
            return self._spoke(step, persona, exchange, "rebuttal")

        return await _together("risk_debate", [speak(p) for p in self.deps.agents.risk])

    async def judge(self, state: DeskState) -> dict[str, Any]:
        step = await self._run(
            self.deps.agents.judge,
            state["facts"],
            proposal=state["proposal"],
            plan=state["plan"],
            risk_debate=[_flat(e, "view") for e in state.get("risk_debate", [])],
            memories=state.get("memories", []),
        )
        return _bookkeeping(step) | _output("final", step.output)

    async def finish(self, state: DeskState) -> dict[str, Any]:
        request = self.request
        fields: dict[str, Any] = dict(state.get("analysts", {}))
        for key in ("facts", "situation", "memories", "plan", "proposal", "final"):
            if key in state:
                fields[key] = state[key]  # type: ignore[literal-required,unused-ignore]
        result = DeskResult.model_validate(
            fields
            | {
                "symbol": request.symbol,
                "as_of": request.as_of,
                "decision": "failed",
                "agents": state.get("reports", []),
                "data_missing": sorted(set(state.get("missing", []))),
                "run_id": self.deps.run.run_id,
                "chart": state.get("chart"),
                "debate": state.get("debate", []),
                "risk_debate": state.get("risk_debate", []),
            }
        )
        verdict = state.get("verdict")
        if verdict:
            result = result.model_copy(update=verdict | {"final": None})
        elif result.final is not None:
            result = result.model_copy(update={"decision": result.final.action})
        else:
            result = result.model_copy(update={"stage": "judge", "reason": "no decision reached"})
        return {"result": result.model_dump(mode="json")}


@dataclass(frozen=True)
class _AnalystNode:
    """The node of one analyst (a graph node is called with the state alone)."""

    nodes: DeskNodes
    name: str

    async def __call__(self, state: DeskState) -> dict[str, Any]:
        return await self.nodes.run_analyst(self.name, state)


def _output(key: str, output: BaseModel | None) -> dict[str, Any]:
    return {} if output is None else {key: output.model_dump(mode="json")}

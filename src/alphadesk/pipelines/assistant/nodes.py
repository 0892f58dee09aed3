"""The assistant's graph nodes: each takes the question one state further and returns
what it found as a plain-JSON update.

    plan (PLANNING: classify, resolve the instant, route)
      -> execute (EXECUTING: DIRECT's calls at once, PARALLEL's per symbol) -> respond
      -> iterate (EXECUTING, then RESPONDING as the answer streams: a tool loop)
      -> respond (RESPONDING: the answer streams token by token)
    -> finish (IDLE: the result, the exchange into the conversation and the audit log)

A node that fails, or runs past the question's time, moves it to ERROR and on to finish.
"""

from __future__ import annotations

import asyncio
import json
import logging
import operator
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Annotated, Any, TypeVar

from pydantic import AwareDatetime, JsonValue
from typing_extensions import TypedDict  # pydantic reads a TypedDict of it on Python 3.11

from alphadesk.agent import Agent, RunContext, RunResult, Toolset
from alphadesk.agents.assistant import (
    CLASSIFIER,
    AgentThinker,
    Classification,
    RouteDeps,
    RouterDecision,
    answer_agent,
)
from alphadesk.agents.assistant.router import router_agent
from alphadesk.agents.assistant.tasks import (
    AnswerTask,
    ClassifierTask,
    IterateTask,
    QuestionTask,
    RouterTask,
)
from alphadesk.agents.spec import configured
from alphadesk.agents.task import AgentTask
from alphadesk.config import CacheMode, Settings
from alphadesk.data.base import MarketData, utc_now
from alphadesk.data.web import WebSearch
from alphadesk.llm.messages import ToolMessage, text_of
from alphadesk.pipelines.agent_steps import AgentSteps, agent_report
from alphadesk.pipelines.assistant.calls import CallBudget, PlannedCall, limited, run_planned
from alphadesk.pipelines.assistant.clock import market_symbols, resolve_as_of
from alphadesk.pipelines.assistant.conversation import record_exchange
from alphadesk.pipelines.assistant.events import Classified, ContextResolved, Routed, State
from alphadesk.pipelines.assistant.models import ChatRequest, ChatResult, NumberCheck
from alphadesk.pipelines.assistant.numbers import check_numbers
from alphadesk.pipelines.assistant.question import CallRecord, Question
from alphadesk.pipelines.assistant.smalltalk import (
    SMALL_TALK_CLASSIFICATION,
    SMALL_TALK_DECISION,
    is_small_talk,
)
from alphadesk.pipelines.base import NodeFunction, PipelineRun, StateCodec
from alphadesk.pipelines.models import AgentReport
from alphadesk.portfolio import PaperPortfolio
from alphadesk.store import ConversationStore
from alphadesk.tools.assistant.deps import ChatDeps, DeskRunner
from alphadesk.tools.catalog import ToolCatalog, tool_catalog
from alphadesk.tools.deps import ToolDeps

__all__ = ["CHAT_STATE", "NODES", "AssistantDeps", "AssistantNodes", "ChatState"]

logger = logging.getLogger(__name__)

NODES = ("plan", "execute", "iterate", "respond", "finish")
_TaskT = TypeVar("_TaskT", bound=QuestionTask)
_SMALL_TALK = 150  # tokens: a greeting's answer is a sentence or two

# A node's work: the question as the node sees it, the graph's state, and the update it
# fills as it goes (what it found before a failure is kept).
_Body = Callable[[Question, "ChatState", "ChatState"], Awaitable[None]]


class ChatState(TypedDict, total=False):
    """Graph state, typed; the graph keeps it as JSON (``CHAT_STATE``) so every checkpoint
    can be stored and resumed."""

    phase: State  # the state machine's state
    seconds: float  # spent so far, of the question's request_timeout_s
    as_of: AwareDatetime
    as_of_note: str | None
    small_talk: bool
    classification: Classification
    route: RouterDecision
    max_turns: int
    results: list[JsonValue]  # the planned calls' results, as the answer writer reads them
    sources: list[str]  # what the answer's figures are traced to
    answer: str
    numbers: NumberCheck
    calls: Annotated[list[CallRecord], operator.add]
    agents: Annotated[list[AgentReport], operator.add]
    error: str
    result: ChatResult


CHAT_STATE = StateCodec(ChatState)


@dataclass(frozen=True)
class AssistantDeps:
    """What the nodes of one question use.

    Attributes:
        settings: Agent settings, and whether this run is a replay.
        market: Point-in-time market data.
        steps: Runs the question's agents with their models, under the run's budgets
            (the question's time for the wall time) and ledger.
        conversations: Where the exchange and the audit log go.
        portfolio: The paper portfolio ``get_positions`` reads.
        account: The paper account.
        catalog: The tools the router may choose from (None: every tool, imported when
            a question first needs one).
        desks: The desks the desk tools run.
        web: The web search provider (None: unavailable).
    """

    settings: Settings
    market: MarketData
    steps: AgentSteps
    conversations: ConversationStore
    portfolio: PaperPortfolio
    account: str
    catalog: ToolCatalog | None
    desks: Mapping[str, DeskRunner]
    web: WebSearch | None


class AssistantNodes:
    """The node functions of one question, bound to its dependencies, request and run."""

    def __init__(self, deps: AssistantDeps, request: ChatRequest, run: PipelineRun) -> None:
        self.deps, self.request, self.run = deps, request, run
        self.asked_at: datetime = request.asked_at or utc_now()
        self.history = request.history or []

    @property
    def _catalog(self) -> ToolCatalog:
        return self.deps.catalog or tool_catalog()

    def __call__(self, name: str) -> NodeFunction:
        if name not in NODES:
            raise KeyError(f"no node {name!r}; the nodes are {list(NODES)}")
        if name == "finish":
            return CHAT_STATE.node(self._finish)
        body: _Body = getattr(self, f"_{name}")
        return CHAT_STATE.node(self._node(body))

    # -- every node ---------------------------------------------------------------------

    def _node(self, body: _Body) -> Callable[[ChatState], Awaitable[ChatState]]:
        """``body`` within what is left of the question's time; a failure is an ERROR
        state for the user (the log keeps the trace), not a crash."""

        async def node(state: ChatState) -> ChatState:
            q = Question.at(self.run.run_id, self.run.emit, state)
            spent = state.get("seconds", 0.0)
            left = self.request.limits.request_timeout_s - spent
            out: ChatState = {}
            started = time.monotonic()
            try:
                async with asyncio.timeout(max(left, 0.0)) as deadline:
                    await body(q, state, out)
            except Exception as exc:
                q.fail(self._failure(exc, timed_out=deadline.expired()))
            seconds = spent + time.monotonic() - started
            return {**out, **q.update(), "seconds": seconds}

        return node

    def _failure(self, exc: Exception, *, timed_out: bool) -> str:
        if timed_out:
            return f"the question took longer than {self.request.limits.request_timeout_s:g} s"
        logger.info("assistant question failed", exc_info=exc)
        return f"{type(exc).__name__}: {exc}"

    async def _agent(
        self,
        q: Question,
        name: str,
        agent: Agent[Any, Any],
        task: AgentTask,
        deps: Any,
        as_of: datetime | None = None,
    ) -> RunResult[Any]:
        """Run one of the question's agents (at ``as_of``; before it is resolved, when the
        question was asked): every agent run of the assistant goes through here."""
        started = time.monotonic()
        result = await self.deps.steps.call(
            name, agent, task, deps, as_of=as_of or self.asked_at, on_event=q.emit
        )
        q.reports.append(agent_report(name, result, time.monotonic() - started))
        return result

    # -- PLANNING -----------------------------------------------------------------------

    async def _plan(self, q: Question, state: ChatState, out: ChatState) -> None:
        q.to("PLANNING")
        out["as_of"] = self.request.as_of or self.asked_at
        if is_small_talk(self.request.question):  # no classifier, router or tool
            q.emit(Classified(**q.ids, classification=SMALL_TALK_CLASSIFICATION))
            q.emit(Routed(**q.ids, decision=SMALL_TALK_DECISION, max_turns=1))
            out.update(
                {
                    "small_talk": True,
                    "classification": SMALL_TALK_CLASSIFICATION,
                    "route": SMALL_TALK_DECISION,
                    "max_turns": 1,
                }
            )
            return
        c = await self._classify(q)
        out["classification"] = c
        as_of, note = resolve_as_of(self.deps.market, self.request.as_of, self._about(c),
                                    self.asked_at)  # fmt: skip
        out.update({"as_of": as_of, "as_of_note": note})
        session = self.request.session_id or ""
        q.emit(ContextResolved(**q.ids, session_id=session, as_of=as_of, note=note))
        decision = await self._route(q, c)
        turns = min(decision.max_turns, self.request.limits.max_iterations)
        q.emit(Routed(**q.ids, decision=decision, max_turns=turns))
        out.update({"route": decision, "max_turns": turns})

    def _about(self, c: Classification) -> list[str]:
        """The symbols whose data decides the question's instant."""
        symbols = list(c.symbols)
        if c.question_type == "portfolio":
            _, positions = self.deps.portfolio.positions(self.deps.account)
            symbols += list(dict.fromkeys(p.contract.symbol for p in positions))
        if c.question_type == "market":
            symbols = market_symbols(symbols, c.categories)
        return symbols

    async def _classify(self, q: Question) -> Classification:
        task = ClassifierTask(history=self._history_text, question=self.request.question)
        classifier = configured(CLASSIFIER.agent, self.deps.settings)
        deps = ToolDeps(market=self.deps.market)
        run = await self._agent(q, "classifier", classifier, task, deps)
        q.emit(Classified(**q.ids, classification=run.output))
        output: Classification = run.output
        return output

    async def _route(self, q: Question, c: Classification) -> RouterDecision:
        task = RouterTask(question=self.request.question, classification=c)
        deps = RouteDeps(self._catalog, c, self.request.limits.max_tool_calls)
        router = configured(router_agent(self._catalog), self.deps.settings)
        run = await self._agent(q, "router", router, task, deps)
        output: RouterDecision = run.output
        return output

    # -- EXECUTING ----------------------------------------------------------------------

    async def _execute(self, q: Question, state: ChatState, out: ChatState) -> None:
        """DIRECT's and PARALLEL's calls, all at once, without a model turn."""
        c, decision = _planned(state)
        q.to("EXECUTING")
        ctx = self._context(q, state)
        outcomes = await run_planned(self._toolset(decision), ctx, _expand(decision, c))
        out["sources"] = [json.dumps(o.result, default=str) for o in outcomes if o.ok]
        out["results"] = json.loads(json.dumps([o.as_json() for o in outcomes], default=str))

    async def _iterate(self, q: Question, state: ChatState, out: ChatState) -> None:
        """ITERATIVE: a tool loop whose last turn is the answer, streamed."""
        c, decision = _planned(state)
        q.to("EXECUTING")
        turns = state["max_turns"]
        task = self._task(IterateTask, state, c, turns=turns)
        agent = configured(answer_agent(c.asset_class, self._toolset(decision), turns),
                           self.deps.settings)  # fmt: skip
        ctx = self._context(q, state)
        run = await self._agent(q, "answer", agent, task, ctx.deps, as_of=ctx.as_of)
        sources = [text_of(m.content) for m in run.messages if isinstance(m, ToolMessage)]
        out.update({"sources": sources, "answer": run.output})
        out["numbers"] = q.check(self._numbers(run.output, sources))

    def _toolset(self, decision: RouterDecision) -> Toolset:
        """The routed tools, under the question's call budget and tool timeout."""
        budget = CallBudget(self.request.limits.max_tool_calls)
        selected = self._catalog.select(*decision.selected_tools)
        return limited(selected, budget, self.request.limits.tool_timeout_s)

    def _context(self, q: Question, state: ChatState) -> RunContext[ChatDeps]:
        deps = ChatDeps(
            market=self.deps.market,
            run_dir=self.run.run_dir,
            portfolio=self.deps.portfolio,
            account=self.deps.account,
            thinker=AgentThinker(self.deps.steps.model("thinker")),
            desks=self.deps.desks,
            web=self.deps.web,
            clock=lambda: self.asked_at,
        )
        return RunContext(
            deps=deps,
            as_of=state["as_of"],
            run_id=self.run.run_id,
            agent="assistant",
            ledger=self.run.ledger,
            emit=q.emit,
        )

    # -- RESPONDING ---------------------------------------------------------------------

    async def _respond(self, q: Question, state: ChatState, out: ChatState) -> None:
        c = state["classification"]
        q.to("RESPONDING")
        task = self._task(AnswerTask, state, c, results=state.get("results", []))
        agent = answer_agent(c.asset_class, Toolset("none"), 1)
        if state.get("small_talk"):
            agent, deps = replace(agent, max_tokens=_SMALL_TALK), None
        else:
            agent, deps = configured(agent, self.deps.settings), self._context(q, state).deps
        run = await self._agent(q, "answer", agent, task, deps, as_of=state["as_of"])
        out["answer"] = run.output
        out["numbers"] = q.check(self._numbers(run.output, state.get("sources", [])))

    def _numbers(self, answer: str, sources: list[str]) -> NumberCheck:
        texts = [*sources, self.request.question, *(m.content for m in self.history)]
        return check_numbers(answer, texts)

    def _task(
        self, kind: type[_TaskT], state: ChatState, c: Classification, **values: Any
    ) -> _TaskT:
        """The answer writer's task of ``kind`` for this question."""
        return kind(
            history=self._history_text,
            question=self.request.question,
            as_of=state["as_of"],
            as_of_note=state.get("as_of_note"),
            classification=c,
            **values,
        )

    @property
    def _history_text(self) -> str:
        if not self.history:
            return "(none)"
        return "\n".join(f"{m.role}: {m.content}" for m in self.history)

    # -- IDLE ---------------------------------------------------------------------------

    async def _finish(self, state: ChatState) -> ChatState:
        """The result; the exchange into the conversation and every call into the audit
        log, unless replaying (a replay repeats a run, it writes nothing new)."""
        q = Question.at(self.run.run_id, self.run.emit, state)
        q.to("IDLE")
        calls = state.get("calls", [])
        result = self._result(state, calls)
        if self.deps.settings.cache is not CacheMode.REPLAY:
            record_exchange(self.deps.conversations, result, calls)
        return {"phase": q.state, "result": result}

    def _result(self, state: ChatState, calls: list[CallRecord]) -> ChatResult:
        records = [call.as_result() for call in calls]
        c = state.get("classification")
        error = state.get("error")
        return ChatResult(
            symbol=", ".join(c.symbols) if c else "",
            as_of=state.get("as_of") or self.request.as_of or self.asked_at,
            decision="error" if error else "completed",
            reason=error,
            agents=state.get("agents", []),
            session_id=self.request.session_id or "",
            run_id=self.run.run_id,
            question=self.request.question,
            answer=state.get("answer", ""),
            as_of_note=state.get("as_of_note"),
            classification=c,
            route=state.get("route"),
            tool_calls=records,
            failures=[f"{r.tool}: {r.error}" for r in records if not r.ok],
            numbers=state.get("numbers") or NumberCheck(checked=0, traced=0),
            models={name: model.name for name, model in self.deps.steps.models.resolved().items()},
            usage=self.run.ledger.totals,
            seconds=round(state.get("seconds", 0.0), 3),
        )


def _planned(state: ChatState) -> tuple[Classification, RouterDecision]:
    return state["classification"], state["route"]


def next_after_plan(state: ChatState) -> str:
    """ITERATIVE with tools loops; calls to make run first; else straight to the answer."""
    if state.get("error"):
        return "finish"
    if state.get("small_talk"):
        return "respond"
    c, decision = _planned(state)
    if decision.strategy == "ITERATIVE" and decision.selected_tools:
        return "iterate"
    return "execute" if _expand(decision, c) else "respond"


def _expand(decision: RouterDecision, c: Classification) -> list[PlannedCall]:
    """The calls to make now: DIRECT's as listed, PARALLEL's once per symbol."""
    if decision.strategy != "PARALLEL":
        return [PlannedCall(k.tool, k.arguments) for k in decision.calls]
    return [
        PlannedCall(k.tool, k.arguments | {"symbol": symbol})
        for symbol in c.symbols
        for k in decision.calls
    ]

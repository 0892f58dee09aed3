"""The assistant: a chat about markets that picks its tools, shows what it did and checks
every figure it writes.

One question runs: PLANNING (classify, resolve the instant, route), EXECUTING (the route's
strategy: DIRECT calls once and concurrently; PARALLEL the same calls per symbol; ITERATIVE
a tool loop with a forced final answer), RESPONDING (the answer streams token by token),
then IDLE, or ERROR with the reason. :meth:`AssistantPipeline.run` is the one async
generator of events every front end consumes (the CLI renders it; an SSE endpoint sends
it as it comes); :meth:`AssistantPipeline.ask` drains it and returns the result.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from typing import Any

from alphadesk.agent import RunContext, RunResult, Toolset, UsageLimits
from alphadesk.agent import events as ev
from alphadesk.agents.assistant import (
    ANSWER,
    CLASSIFIER,
    ROUTER,
    THINKER,
    AgentThinker,
    Classification,
    RouteDeps,
    RouterDecision,
    answer_agent,
)
from alphadesk.agents.spec import AgentSpec, configured, load_prompt, model_for
from alphadesk.config import Settings
from alphadesk.data.base import Clock, MarketData, utc_now
from alphadesk.data.web import WebSearch, web_search
from alphadesk.llm.base import Model
from alphadesk.llm.messages import ToolMessage, text_of
from alphadesk.pipelines.assistant.clock import MARKET_SYMBOLS, resolve_as_of
from alphadesk.pipelines.assistant.desks import desk_runners
from alphadesk.pipelines.assistant.events import ChatFinished, Classified, ContextResolved, Routed
from alphadesk.pipelines.assistant.guard import CallBudget, PlannedCall, guarded, run_planned
from alphadesk.pipelines.assistant.models import ChatRequest, ChatResult
from alphadesk.pipelines.assistant.numbers import check_numbers
from alphadesk.pipelines.assistant.session import Session
from alphadesk.pipelines.assistant.smalltalk import (
    SMALL_TALK_CLASSIFICATION,
    SMALL_TALK_DECISION,
    is_small_talk,
)
from alphadesk.pipelines.recording import RunRecorder
from alphadesk.store import ConversationStore, PaperPortfolio, RunStore
from alphadesk.store.portfolio import DEFAULT_ACCOUNT
from alphadesk.tools.assistant.deps import ChatDeps
from alphadesk.tools.catalog import ToolCatalog, tool_catalog
from alphadesk.tools.deps import ToolDeps

__all__ = ["AGENTS", "AssistantPipeline"]

logger = logging.getLogger(__name__)

_SMALL_TALK = 150  # tokens: a greeting's answer is a sentence or two

_PROMPTS = "alphadesk.agents.assistant"
AGENTS: dict[str, AgentSpec[Any, Any]] = {
    "classifier": CLASSIFIER,
    "router": ROUTER,
    "answer": ANSWER,
    "thinker": THINKER,
}


class AssistantPipeline:
    """The assistant over one settings object and one market.

    Args:
        settings: Models, limits and where the stores live.
        market: Point-in-time market data.
        model: A model string for every agent (``rules`` offline), else the settings'.
        models: Agent name -> a ready model (tests pass scripted ones); overrides ``model``.
        web: The web search provider (default: Tavily when its key is set).
        clock: Now (tests fix it).
        account: The paper account ``get_positions`` reads.
        catalog: The tools the router may choose from (default: every tool).
    """

    def __init__(
        self,
        settings: Settings,
        market: MarketData,
        *,
        model: str | None = None,
        models: Mapping[str, Model] | None = None,
        web: WebSearch | None = None,
        clock: Clock = utc_now,
        account: str = DEFAULT_ACCOUNT,
        catalog: ToolCatalog | None = None,
    ) -> None:
        self.settings, self.market, self.clock, self.account = settings, market, clock, account
        given = dict(models or {})
        self.models: dict[str, Model] = {
            name: given.get(name) or model_for(spec, settings, model)
            for name, spec in AGENTS.items()
        }
        self.store = RunStore(settings.store_path)
        self.conversations = ConversationStore(settings.store_path)
        self.portfolio = PaperPortfolio(settings.store_path)
        self.catalog: ToolCatalog = catalog or tool_catalog()
        self.desks = desk_runners(settings, market, model)
        self.web = web if web is not None else web_search()

    @property
    def model_label(self) -> str:
        return ", ".join(sorted({m.name for m in self.models.values()}))

    # -- the one entry point ------------------------------------------------------------

    async def run(self, request: ChatRequest) -> AsyncIterator[ev.BaseEvent]:
        """Every event of one question as it happens; the last is ``ChatFinished``."""
        queue: asyncio.Queue[ev.BaseEvent | None] = asyncio.Queue()
        task = asyncio.create_task(self._converse(request, queue.put_nowait))
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
            await task  # re-raise a bug instead of swallowing it
        finally:
            task.cancel()

    async def ask(self, request: ChatRequest, on_event: ev.EventSink | None = None) -> ChatResult:
        """Answer one question (``on_event`` sees every event on the way)."""
        result: ChatResult | None = None
        async for event in self.run(request):
            if on_event is not None:
                on_event(event)
            if isinstance(event, ChatFinished):
                result = event.result
        assert result is not None  # _converse always ends with ChatFinished
        return result

    # -- one question ---------------------------------------------------------------------

    def _with_default_limits(self, request: ChatRequest) -> ChatRequest:
        """The settings' limits (``[assistant]``) for a request that names none of its own."""
        if "limits" in request.model_fields_set:
            return request
        defaults = self.settings.assistant
        limits = request.limits.model_copy(
            update={"request_timeout_s": defaults.request_timeout_s,
                    "max_tool_calls": defaults.max_tool_calls}
        )  # fmt: skip
        return request.model_copy(update={"limits": limits})

    async def _converse(self, request: ChatRequest, emit: ev.EventSink) -> ChatResult:
        request = self._with_default_limits(request)
        session_id = request.session_id or self.conversations.new_session(request.question)
        self.conversations.ensure(session_id, request.question)
        recorder = RunRecorder.start(
            self.store,
            kind="assistant",
            title=request.question[:60],
            request=request,
            as_of=request.as_of or self.clock(),
            model=self.model_label,
        )
        session = Session(
            request=request,
            session_id=session_id,
            recorder=recorder,
            history=self.conversations.history(session_id),
            forward=emit,
        )
        try:
            async with asyncio.timeout(request.limits.request_timeout_s):
                await self._answer(session)
        except TimeoutError:
            session.fail(f"the question took longer than {request.limits.request_timeout_s:g} s")
        except asyncio.CancelledError:  # e.g. the client went away: the run is not left running
            recorder.finish(status="interrupted", result=None, error="cancelled")
            raise
        except Exception as exc:  # a typed failure for the user; the log keeps the trace
            logger.info("assistant question failed", exc_info=True)
            session.fail(f"{type(exc).__name__}: {exc}")
        session.to("IDLE")
        result = session.result(self.models, time.monotonic())
        session.persist(self.conversations, result)
        session.emit(ChatFinished(**session.ids, result=result))
        return result

    async def _answer(self, s: Session) -> None:
        s.to("PLANNING")
        if is_small_talk(s.request.question):
            await self._small_talk(s)
            return
        c = await self._classify(s)
        symbols = c.symbols + (self._held() if c.question_type == "portfolio" else [])
        if c.question_type == "market":
            symbols += MARKET_SYMBOLS
        s.as_of, s.as_of_note = resolve_as_of(self.market, s.request.as_of, symbols, self.clock())
        s.emit(ContextResolved(**s.ids, session_id=s.session_id, as_of=s.as_of, note=s.as_of_note))
        decision = await self._route(s, c)
        turns = min(decision.max_turns, s.request.limits.max_iterations)
        s.emit(Routed(**s.ids, decision=decision, max_turns=turns))
        budget = CallBudget(s.request.limits.max_tool_calls)
        selected = self.catalog.select(*decision.selected_tools)
        toolset = guarded(selected, budget, s.request.limits.tool_timeout_s)
        ctx = self._context(s)
        if decision.strategy == "ITERATIVE" and decision.selected_tools:
            s.to("EXECUTING")
            prompt = self._prompt("iterate_task", s, c, turns=turns)
            run = await self._run_answer(s, c, toolset, turns, prompt, ctx.deps)
            s.sources += [text_of(m.content) for m in run.messages if isinstance(m, ToolMessage)]
        else:
            if decision.calls:
                s.to("EXECUTING")
            outcomes = await run_planned(toolset, ctx, _expand(decision, c))
            s.sources += [json.dumps(o.result, default=str) for o in outcomes if o.ok]
            results = json.dumps([o.as_json() for o in outcomes], indent=1, default=str)
            s.to("RESPONDING")
            prompt = self._prompt("answer_task", s, c, results=results)
            run = await self._run_answer(s, c, Toolset("none"), 1, prompt, ctx.deps)
        s.answer = run.output
        s.check(check_numbers(s.answer, [*s.sources, s.request.question, *s.history_texts]))

    async def _small_talk(self, s: Session) -> None:
        """A greeting or thanks: no classifier, router or tool, one short answer."""
        c = s.classification = SMALL_TALK_CLASSIFICATION
        s.emit(Classified(**s.ids, classification=c))
        s.route = SMALL_TALK_DECISION
        s.emit(Routed(**s.ids, decision=SMALL_TALK_DECISION, max_turns=1))
        s.to("RESPONDING")
        prompt = self._prompt("answer_task", s, c, results="[]")
        agent = replace(answer_agent(c.asset_class, Toolset("none"), 1), max_tokens=_SMALL_TALK)
        run = await agent.run(self.models["answer"], prompt, deps=None, **s.run_kw(self))
        s.answer = run.output
        s.check(check_numbers(s.answer, [s.request.question, *s.history_texts]))

    # -- the steps ------------------------------------------------------------------------

    async def _classify(self, s: Session) -> Classification:
        prompt = load_prompt(_PROMPTS, "classifier_task").substitute(
            history=s.history_text, question=s.request.question
        )
        classifier = configured(CLASSIFIER.agent, self.settings)
        run = await classifier.run(
            self.models["classifier"], prompt, deps=ToolDeps(market=self.market), **s.run_kw(self)
        )
        s.classification = run.output
        s.emit(Classified(**s.ids, classification=run.output))
        return run.output

    async def _route(self, s: Session, c: Classification) -> RouterDecision:
        prompt = load_prompt(_PROMPTS, "router_task").substitute(
            question=s.request.question, classification=c.model_dump_json(indent=1)
        )
        deps = RouteDeps(self.catalog, c, s.request.limits.max_tool_calls)
        router = configured(ROUTER.agent, self.settings)
        run = await router.run(self.models["router"], prompt, deps=deps, **s.run_kw(self))
        s.route = run.output
        return run.output

    async def _run_answer(
        self,
        s: Session,
        c: Classification,
        toolset: Toolset,
        turns: int,
        prompt: str,
        deps: ChatDeps,
    ) -> RunResult[str]:
        agent = configured(answer_agent(c.asset_class, toolset, turns), self.settings)
        return await agent.run(self.models["answer"], prompt, deps=deps, **s.run_kw(self))

    def _context(self, s: Session) -> RunContext[ChatDeps]:
        deps = ChatDeps(
            market=self.market,
            run_dir=self.settings.runs_dir / s.recorder.run_id,
            portfolio=self.portfolio,
            account=self.account,
            thinker=AgentThinker(self.models["thinker"]),
            desks=self.desks,
            web=self.web,
            clock=self.clock,
        )
        return RunContext(
            deps=deps,
            as_of=s.as_of,
            run_id=s.recorder.run_id,
            agent="assistant",
            ledger=s.recorder.ledger,
            emit=s.emit,
        )

    def _prompt(self, name: str, s: Session, c: Classification, **values: Any) -> str:
        return load_prompt(_PROMPTS, name).substitute(
            history=s.history_text,
            question=s.request.question,
            as_of=s.as_of.date().isoformat(),
            as_of_note=f" {s.as_of_note}" if s.as_of_note else "",
            classification=c.model_dump_json(indent=1),
            **values,
        )

    def _held(self) -> list[str]:
        _, positions = self.portfolio.positions(self.account)
        return list(dict.fromkeys(p.contract.symbol for p in positions))

    def limits(self, s: Session) -> UsageLimits:
        budget = self.settings.limits
        return UsageLimits(
            requests=budget.requests,
            total_tokens=budget.total_tokens,
            cost_usd=budget.cost_usd,
            wall_time_s=s.request.limits.request_timeout_s,
        )


def _expand(decision: RouterDecision, c: Classification) -> list[PlannedCall]:
    """The calls to make now: DIRECT's as listed, PARALLEL's once per symbol."""
    if decision.strategy != "PARALLEL":
        return [PlannedCall(k.tool, k.arguments) for k in decision.calls]
    return [
        PlannedCall(k.tool, k.arguments | {"symbol": symbol})
        for symbol in c.symbols
        for k in decision.calls
    ]

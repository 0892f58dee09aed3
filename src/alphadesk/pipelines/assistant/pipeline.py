"""The assistant: a chat about markets that picks its tools, shows what it did and checks
every figure it writes.

One question is a run of the assistant's graph (``nodes.py``): PLANNING (classify, resolve
the instant, route), EXECUTING (the route's strategy: DIRECT calls once and concurrently;
PARALLEL the same calls per symbol; ITERATIVE a tool loop with a forced final answer),
RESPONDING (the answer streams token by token), then IDLE, or ERROR with the reason. The
shared ``PipelineRunner`` records it, so a question resumes and replays like any run.
:meth:`AssistantPipeline.run` is the one async generator of events every front end
consumes (the CLI renders it; an SSE endpoint sends it as it comes);
:meth:`AssistantPipeline.ask` drains it and returns the result.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from alphadesk.agent import events as ev
from alphadesk.agents.assistant import ANSWER, CLASSIFIER, ROUTER, THINKER
from alphadesk.agents.spec import AgentSpec
from alphadesk.config import Settings, UsageLimits
from alphadesk.data.base import Clock, MarketData, utc_now
from alphadesk.data.web import WebSearch, web_search
from alphadesk.llm.base import Model
from alphadesk.pipelines.agent_pipeline import AgentPipeline
from alphadesk.pipelines.agent_steps import AgentSteps
from alphadesk.pipelines.assistant.desks import desk_runners
from alphadesk.pipelines.assistant.events import ChatFinished
from alphadesk.pipelines.assistant.models import ChatRequest, ChatResult
from alphadesk.pipelines.assistant.nodes import (
    CHAT_STATE,
    NODES,
    AssistantDeps,
    AssistantNodes,
    ChatState,
    next_after_plan,
)
from alphadesk.pipelines.assistant.report import render_report
from alphadesk.pipelines.assistant.smalltalk import is_small_talk
from alphadesk.pipelines.base import DirectAnswer, Nodes, PipelineRun
from alphadesk.pipelines.runner import PipelineRunner
from alphadesk.portfolio import DEFAULT_ACCOUNT, PaperPortfolio
from alphadesk.store import ConversationStore
from alphadesk.tools.catalog import ToolCatalog, tool_catalog

if TYPE_CHECKING:
    from langgraph.graph import StateGraph

__all__ = ["AGENTS", "AssistantPipeline"]

AGENTS: dict[str, AgentSpec[Any, Any]] = {
    "classifier": CLASSIFIER,
    "router": ROUTER,
    "answer": ANSWER,
    "thinker": THINKER,
}


class AssistantPipeline(AgentPipeline[ChatRequest, ChatResult]):
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

    kind = "assistant"
    request_type = ChatRequest
    result_type = ChatResult

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
        super().__init__(
            settings, market, AGENTS.values(), render_report, model=model, models=models
        )
        self.models.resolved()  # a bad model name fails here, not mid-question
        self.clock, self.account = clock, account
        self.conversations = ConversationStore(settings.store_path)
        self.portfolio = PaperPortfolio(settings.store_path)
        self._catalog = catalog
        self.desks = desk_runners(settings, market, model)
        self.web = web if web is not None else web_search()

    @property
    def catalog(self) -> ToolCatalog:
        """The tools the router may choose from (every tool's module is imported on first
        use: a greeting needs none)."""
        return self._catalog or tool_catalog()

    # -- the one entry point ------------------------------------------------------------

    async def run(self, request: ChatRequest) -> AsyncIterator[ev.BaseEvent]:
        """Every event of one question as it happens; the last is ``ChatFinished``.

        The question is recorded as a run; stopping the generator (a client that went
        away) cancels it, and the run is recorded as interrupted.
        """
        queue: asyncio.Queue[ev.BaseEvent | None] = asyncio.Queue()
        runner = PipelineRunner(self.settings, self, on_event=queue.put_nowait, charts=False)
        task = asyncio.create_task(runner.analyze(self.prepared(request)))
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
            result = await task  # re-raise a bug instead of swallowing it
            assert result is not None  # no interrupt was asked for
            yield ChatFinished(run_id=result.run_id, agent="assistant", result=result)
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
        assert result is not None  # run always ends with ChatFinished
        return result

    def prepared(self, request: ChatRequest) -> ChatRequest:
        """``request`` as it is answered, and recorded for a replay to ask again: in its
        session (a new one if it names none) with the conversation so far, asked now,
        under the settings' limits (``[assistant]``) unless it names its own."""
        session_id = request.session_id or self.conversations.new_session(request.question)
        self.conversations.ensure(session_id, request.question)
        update: dict[str, Any] = {
            "session_id": session_id,
            "history": self.conversations.history(session_id)
            if request.history is None
            else request.history,
            "asked_at": request.asked_at or self.clock(),
        }
        if "limits" not in request.model_fields_set:
            defaults = self.settings.assistant
            update["limits"] = request.limits.model_copy(
                update={"request_timeout_s": defaults.request_timeout_s,
                        "max_tool_calls": defaults.max_tool_calls}
            )  # fmt: skip
        return request.model_copy(update=update)

    # -- the pipeline -------------------------------------------------------------------

    def title(self, request: ChatRequest) -> str:
        return request.question[:60]

    def nodes(self, request: ChatRequest, run: PipelineRun) -> Nodes:
        """The graph's node functions for one question, bound to its run."""
        deps = AssistantDeps(
            settings=self.settings,
            market=self.market,
            steps=AgentSteps(run, self.models, self.limits(request)),
            conversations=self.conversations,
            portfolio=self.portfolio,
            account=self.account,
            catalog=self._catalog,
            desks=self.desks,
            web=self.web,
        )
        return AssistantNodes(deps, request, run)

    def limits(self, request: ChatRequest) -> UsageLimits:
        """The settings' budgets, with the question's time as the run's wall time."""
        return self.settings.limits.model_copy(
            update={"wall_time_s": request.limits.request_timeout_s}
        )

    def direct(self, request: ChatRequest) -> DirectAnswer[ChatResult] | None:
        """Small talk is answered without the graph: plan, respond and finish, in turn."""
        if not is_small_talk(request.question):
            return None

        async def answer(run: PipelineRun) -> ChatResult:
            node = self.nodes(request, run)
            state: dict[str, Any] = {}  # as the graph keeps it: JSON
            step = "plan"
            while True:
                update = await node(step)(state)
                for key, value in update.items():
                    added = key in ("calls", "agents")  # ChatState's list reducers
                    state[key] = state.get(key, []) + value if added else value
                if step == "finish":
                    return ChatResult.model_validate(state["result"])
                step = next_after_plan(CHAT_STATE.load(state)) if step == "plan" else "finish"

        return answer

    @staticmethod
    def graph(request: ChatRequest, node: Nodes) -> StateGraph[ChatState]:
        """The assistant's graph, the same for every question, with ``node(name)`` as each."""
        from langgraph.graph import END, START, StateGraph

        graph = StateGraph(ChatState)
        for name in NODES:
            graph.add_node(name, node(name))
        graph.add_edge(START, "plan")
        graph.add_conditional_edges(
            "plan", _after_plan, ["execute", "iterate", "respond", "finish"]
        )
        graph.add_conditional_edges("execute", _after_execute, ["respond", "finish"])
        graph.add_edge("iterate", "finish")
        graph.add_edge("respond", "finish")
        graph.add_edge("finish", END)
        return graph


def _unless_failed(state: ChatState) -> str:
    return "finish" if state.get("error") else "respond"


_after_plan = CHAT_STATE.route(next_after_plan)
_after_execute = CHAT_STATE.route(_unless_failed)

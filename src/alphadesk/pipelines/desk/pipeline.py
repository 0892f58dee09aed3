"""The trading desk as a LangGraph graph, critical path only, with checkpoints.

    START -> market | sentiment | news | fundamentals | reflect | chart   (concurrently)
          -> brief (fact sheet, situation, recall)
          -> debate (bull and bear argue, concurrently)
          -> rebuttal (each answers the other's argument, concurrently)
             x rounds
          -> manager -> trader
          -> risk (risky, safe and neutral give their views, concurrently)
          -> risk_rebuttal (each answers the other two's views, concurrently)
             x risk_rounds
          -> judge -> finish -> END

One round (what ``--rounds`` and ``--risk-rounds`` count) is two steps: every speaker
states its case, then each answers the others' cases of that round; from the second
round on, a case also answers the others' last rebuttals. That is the shortest critical
path on which every side has answered every other before the manager or the judge
decides: two model calls per round. Taking turns (bull, then bear, then bull) needs
three for the same, and one concurrent step alone leaves every case unanswered. With no
rounds the brief goes straight to the manager, and with no risk rounds the trader to the
judge.

A failed step routes straight to ``finish`` with a typed failure naming the agent: no
decision is made for it, least of all a silent HOLD. Nodes and routes read the typed state;
the graph keeps it as JSON so each checkpoint can be stored and an interrupted run resumed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable, Mapping

from langgraph.graph import END, START, StateGraph

from alphadesk.agents.desk import DeskAgents, default_agents
from alphadesk.config import CacheMode, Settings
from alphadesk.data.base import MarketData
from alphadesk.llm.base import Model
from alphadesk.pipelines.agent_pipeline import AgentPipeline
from alphadesk.pipelines.agent_steps import AgentSteps
from alphadesk.pipelines.base import Nodes, PipelineRun
from alphadesk.pipelines.desk.memory import DeskMemory, open_memory
from alphadesk.pipelines.desk.models import DebateEntry, DeskRequest, DeskResult, RiskEntry
from alphadesk.pipelines.desk.nodes import DESK_STATE, DeskNodeDeps, DeskNodes, DeskState
from alphadesk.pipelines.desk.report import render_report
from alphadesk.pipelines.desk.reuse import AnalystReports
from alphadesk.store import RunStore

__all__ = ["TradingDesk"]


class TradingDesk(AgentPipeline[DeskRequest, DeskResult]):
    """The desk's agents, models and memory. Stateless per analysis."""

    kind = "desk"
    request_type = DeskRequest
    result_type = DeskResult

    def __init__(
        self,
        settings: Settings,
        market: MarketData,
        *,
        model: str | None = None,
        models: Mapping[str, Model] | None = None,
        agents: DeskAgents | None = None,
        memory: DeskMemory | None = None,
        reports: AnalystReports | None = None,
    ) -> None:
        """``reports``: reuse an analyst's report while what it reads is unchanged
        (:mod:`.reuse`); the desk owns it across its analyses."""
        self.reports = reports
        self.agents = agents or default_agents()
        super().__init__(
            settings, market, self.agents.all, render_report, model=model, models=models
        )
        self.memory = memory if memory is not None else open_memory(settings)
        self.store = RunStore(settings.store_path)

    def nodes(self, request: DeskRequest, run: PipelineRun) -> Nodes:
        """The graph's node functions, bound to one run."""
        deps = DeskNodeDeps(
            agents=self.agents,
            market=self.market,
            memory=self.memory,
            store=self.store,
            steps=AgentSteps(run, self.models, self.settings.limits),
            run=run,
            writes_memory=self.settings.memory.reflect
            and self.settings.cache is not CacheMode.REPLAY,
            reports=self.reports,
        )
        return DeskNodes(deps, request).node

    @staticmethod
    def graph_shape(request: DeskRequest) -> Hashable:
        """What of ``request`` the graph depends on: requests alike in it share one
        compiled graph."""
        rounds = (request.rounds, request.risk_rounds)
        return tuple(request.analysts), request.memory, rounds

    @staticmethod
    def graph(request: DeskRequest, node: Nodes) -> StateGraph[DeskState]:
        """The desk's graph for ``request``, with ``node(name)`` as each node's function."""
        graph = StateGraph(DeskState)
        first: list[str] = list(request.analysts)
        if request.memory:  # the reflect node itself skips what this desk cannot do
            first.append("reflect")
        first.append("chart")
        debates = ("debate", "rebuttal", "manager", "trader", "risk", "risk_rebuttal", "judge")
        for name in (*first, "brief", *debates, "finish"):
            graph.add_node(name, node(name))
        for name in first:
            graph.add_edge(START, name)
        graph.add_edge(first, "brief")  # the fan-in waits for every analyst
        # No rounds: the manager decides on the analysts' reports, the judge on the proposal.
        debate = "debate" if request.rounds else "manager"
        risk = "risk" if request.risk_rounds else "judge"
        for stage, then in (
            ("brief", debate),
            ("debate", "rebuttal"),
            ("manager", "trader"),
            ("trader", risk),
            ("risk", "risk_rebuttal"),
        ):
            graph.add_conditional_edges(stage, _next(then), [then, "finish"])
        graph.add_conditional_edges(
            "rebuttal",
            _loop("debate", "manager", request.rounds, "debate"),
            ["debate", "manager", "finish"],
        )
        graph.add_conditional_edges(
            "risk_rebuttal",
            _loop("risk", "judge", request.risk_rounds, "risk_debate"),
            ["risk", "judge", "finish"],
        )
        graph.add_edge("judge", "finish")
        graph.add_edge("finish", END)
        return graph


def _next(node: str) -> Callable[..., Awaitable[str]]:
    def route(state: DeskState) -> str:
        return "finish" if state.get("verdict") else node

    return DESK_STATE.route(route)


def _loop(node: str, then: str, rounds: int, turns: str) -> Callable[..., Awaitable[str]]:
    """Start another round at ``node`` until ``rounds`` rounds are spoken, then go on
    to ``then``."""

    def route(state: DeskState) -> str:
        if state.get("verdict"):
            return "finish"
        entries: list[DebateEntry] | list[RiskEntry] = state.get(turns, [])  # type: ignore[assignment]
        spoken = {entry.round for entry in entries}
        return node if len(spoken) < rounds else then

    return DESK_STATE.route(route)

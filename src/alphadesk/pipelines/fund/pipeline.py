"""The fund as a LangGraph graph: one decision across many names, as one book.

    START -> desks (the trading desk on every name: here, or over worker processes)
          -> manager (the portfolio manager's target weights, checked against the limits
             and the cash; a violation goes back to it as a retry, never through)
          -> finish (the orders that reach the targets, the cash after) -> END

A fund run is recorded as a run of its own (kind ``fund``); each desk it starts is
recorded as its own ``desk`` run, as always. The graph checkpoints after each node: a run
interrupted during ``manager`` resumes there, one interrupted during ``desks`` asks every
desk again. The book (the account's holdings and cash at the instant) is part of the
request, so a resumed or replayed run decides on the book it started with.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor

from langgraph.graph import END, START, StateGraph

from alphadesk.agents.desk import default_agents
from alphadesk.agents.fund import PORTFOLIO_MANAGER
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.llm.base import Model
from alphadesk.pipelines.agent_pipeline import AgentPipeline
from alphadesk.pipelines.agent_steps import AgentSteps
from alphadesk.pipelines.base import Nodes, PipelineRun
from alphadesk.pipelines.fund.desks import DeskRuns
from alphadesk.pipelines.fund.models import FundRequest, FundResult
from alphadesk.pipelines.fund.nodes import FundNodeDeps, FundNodes, FundState
from alphadesk.pipelines.fund.report import render_report

__all__ = ["Fund"]


class Fund(AgentPipeline[FundRequest, FundResult]):
    """The fund's desks, manager and models. Stateless per run.

    ``workers`` (default 1: here) and ``concurrency`` say where and how widely the desks
    run; ``pool`` holds worker processes started before the run (:meth:`DeskRuns.started`).
    """

    kind = "fund"
    request_type = FundRequest
    result_type = FundResult

    def __init__(
        self,
        settings: Settings,
        market: MarketData,
        *,
        model: str | None = None,
        models: Mapping[str, Model] | None = None,
        workers: int | None = 1,
        concurrency: int = 4,
        pool: ProcessPoolExecutor | None = None,
    ) -> None:
        desk = default_agents().all
        super().__init__(settings, market, [PORTFOLIO_MANAGER, *desk], render_report,
                         model=model, models=models)  # fmt: skip
        self._desk_agents = [spec.name for spec in desk]
        self.workers, self.concurrency, self.pool = workers, concurrency, pool

    @property
    def desk_label(self) -> str:
        """The models of the desks' agents."""
        return self.models.label(self._desk_agents)

    def desk_runs(self) -> DeskRuns:
        """Where and how widely the desks run."""
        return DeskRuns(
            settings=self.settings,
            market=self.market,
            model=self.model,
            models=self.models_given,
            workers=self.workers,
            concurrency=self.concurrency,
            pool=self.pool,
        )

    def nodes(self, request: FundRequest, run: PipelineRun) -> Nodes:
        """The graph's node functions, bound to one run."""
        deps = FundNodeDeps(
            settings=self.settings,
            market=self.market,
            desks=self.desk_runs(),
            desk_model=self.desk_label,
            steps=AgentSteps(run, self.models, self.settings.limits),
            run=run,
        )
        return FundNodes(deps, request).node

    @staticmethod
    def graph(request: FundRequest, node: Nodes) -> StateGraph[FundState]:
        """The fund's graph, the same for every request, with ``node(name)`` as each node."""
        graph = StateGraph(FundState)
        for name in ("desks", "manager", "finish"):
            graph.add_node(name, node(name))
        graph.add_edge(START, "desks")
        graph.add_edge("desks", "manager")
        graph.add_edge("manager", "finish")
        graph.add_edge("finish", END)
        return graph

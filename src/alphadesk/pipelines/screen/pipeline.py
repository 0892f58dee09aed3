"""The CSP screen as a pipeline: a universe on one or many dates, every symbol through the
pre-filter and, if it passes, the desk; ranked per date and saved as a table.

    START -> screen (every symbol-date, here, in worker processes or on Ray)
          -> finish (ranked per date, candidates.csv and candidates.parquet) -> END

A screen is a recorded run of its own (kind ``screen``) with its report, result and table;
each desk run it starts is recorded as its own ``csp`` run, as always. The graph
checkpoints after ``screen``: a screen interrupted during ``finish`` resumes there, one
interrupted during ``screen`` runs every symbol-date again (the desk runs it had finished
stay recorded).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from datetime import date, datetime

from langgraph.graph import END, START, StateGraph

from alphadesk.agents.csp import default_agents
from alphadesk.cluster import RayCluster
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.data.calendar import session_close, sessions_between
from alphadesk.llm.base import Model
from alphadesk.pipelines.agent_pipeline import AgentPipeline
from alphadesk.pipelines.base import Nodes, PipelineRun
from alphadesk.pipelines.runner import PipelineRunner
from alphadesk.pipelines.screen.fanout import FanOut
from alphadesk.pipelines.screen.models import Outcome, ScreenHistory, ScreenRequest
from alphadesk.pipelines.screen.nodes import ScreenNodeDeps, ScreenNodes, ScreenState
from alphadesk.pipelines.screen.report import render_report

__all__ = ["ScreenPipeline", "rebalancing_dates", "run_screens"]


def rebalancing_dates(start: date, end: date, every: int) -> list[datetime]:
    """The close of every ``every``-th trading session from ``start`` to ``end``.

    Raises:
        ValueError: an empty range or a step below one.
    """
    if every < 1:
        raise ValueError(f"every must be at least 1 session, got {every}")
    sessions = sessions_between(start, end)
    if not sessions:
        raise ValueError(f"no trading session between {start} and {end}")
    return [session_close(day) for day in sessions[::every]]


class ScreenPipeline(AgentPipeline[ScreenRequest, ScreenHistory]):
    """The screen: where its symbol-dates run (see ``FanOut``) and with which models (the
    CSP desk's, which its runs are labelled with; a request naming its model runs them with
    that one)."""

    kind = "screen"
    request_type = ScreenRequest
    result_type = ScreenHistory

    def __init__(
        self,
        settings: Settings,
        market: MarketData,
        *,
        model: str | None = None,
        models: Mapping[str, Model] | None = None,
        workers: int | None = None,
        concurrency: int = 4,
        cluster: RayCluster | None = None,
        charts: bool = False,
        on_outcome: Callable[[Outcome], None] | None = None,
        pool: ProcessPoolExecutor | None = None,
    ) -> None:
        desk = default_agents()
        super().__init__(
            settings,
            market,
            desk.all,
            render_report,
            labelled=desk.names,
            model=model,
            models=models,
        )
        self.workers, self.concurrency, self.cluster = workers, concurrency, cluster
        self.charts, self.on_outcome, self.pool = charts, on_outcome, pool

    def title(self, request: ScreenRequest) -> str:
        first, last = request.dates[0].date(), request.dates[-1].date()
        when = str(first) if first == last else f"{first}..{last} ({len(request.dates)} dates)"
        index = f" of the {request.universe} members" if request.universe else ""
        return f"csp screen {when}, {len(request.symbols)} symbols{index}"

    def fanout(self, request: ScreenRequest) -> FanOut:
        """Where and how widely ``request``'s symbol-dates run."""
        return FanOut(
            settings=self.settings,
            market=self.market,
            model=request.model or self.model,
            models=self.models_given,
            workers=self.workers,
            concurrency=self.concurrency,
            cluster=self.cluster,
            charts=self.charts,
            on_outcome=self.on_outcome,
            pool=self.pool,
        )

    def nodes(self, request: ScreenRequest, run: PipelineRun) -> Nodes:
        """The graph's node functions, bound to one run and the request's fan-out."""
        deps = ScreenNodeDeps(
            fanout=self.fanout(request), run=run, default_dir=self.settings.runs_dir / run.run_id
        )
        return ScreenNodes(deps, request).node

    @staticmethod
    def graph(request: ScreenRequest, node: Nodes) -> StateGraph[ScreenState]:
        """The screen's graph, the same for every request, with ``node(name)`` as each node."""
        graph = StateGraph(ScreenState)
        graph.add_node("screen", node("screen"))
        graph.add_node("finish", node("finish"))
        graph.add_edge(START, "screen")
        graph.add_edge("screen", "finish")
        graph.add_edge("finish", END)
        return graph


async def run_screens(
    settings: Settings,
    request: ScreenRequest,
    *,
    market: MarketData | None = None,
    workers: int | None = None,
    concurrency: int = 4,
    on_outcome: Callable[[Outcome], None] | None = None,
    cluster: RayCluster | None = None,
    resume_run_id: str | None = None,
) -> ScreenHistory:
    """Screen every symbol on every date as a recorded run (or resume one that was
    interrupted); see ``FanOut`` for where the symbol-dates run."""
    if market is None:
        from alphadesk.data import build_provider

        market = build_provider(settings)
    pipeline = ScreenPipeline(
        settings,
        market,
        model=request.model,
        workers=workers,
        concurrency=concurrency,
        cluster=cluster,
        on_outcome=on_outcome,
    )
    # Workers forked now, before the run's checkpoint connection starts its thread.
    pipeline.pool = pipeline.fanout(request).started(len(request.desk_requests()))
    try:
        history = await PipelineRunner(settings, pipeline, charts=False).analyze(
            request, resume_run_id=resume_run_id
        )
    finally:
        if pipeline.pool is not None:
            pipeline.pool.shutdown(wait=True, cancel_futures=True)
    assert history is not None  # no interrupt was asked for
    return history

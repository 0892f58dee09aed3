"""The strategy lab as a LangGraph graph, with checkpoints.

    START -> research (15 subagents under a limit -> 3 synthesizers -> leader)
          -> develop (N variants) -> backtest (all variants concurrently, on the search
             and validation periods) -> gate (failure analysis | trajectory -> decision)
          -> develop (TUNE, FIX, REFINE) | research (RESEARCH) | holdout (SUCCESS, ABANDON,
             a budget spent, a failed step) -> finish -> END

The window has three periods: search, validation and, at its end, the holdout. The loop
(research to gate) runs at the end of the validation period on a market sealed there, so
no prompt, tool, memory read or backtest of it can reach a holdout bar; the holdout node
alone gets the whole market, and runs the chosen variant on it once. The lab ends with the
best variant so far whatever ended it, and says what did.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from langgraph.graph import END, START, StateGraph

from alphadesk.agents.algo import AlgoAgents, default_agents
from alphadesk.analytics.fuzzy import parse_goal
from alphadesk.backtest.frame import frame_from_bars
from alphadesk.backtest.models import BacktestConfig, Costs
from alphadesk.config import CacheMode, Settings
from alphadesk.data.base import MarketData
from alphadesk.data.sealed import seal
from alphadesk.llm.base import Model
from alphadesk.pipelines.agent_pipeline import AgentPipeline
from alphadesk.pipelines.agent_steps import AgentSteps
from alphadesk.pipelines.algo.backtests import (
    Backtester,
    Periods,
    Split,
    backtest_variant,
    plan_periods,
)
from alphadesk.pipelines.algo.charts import save_trajectory_chart
from alphadesk.pipelines.algo.holdout import HoldoutNode, choose
from alphadesk.pipelines.algo.models import (
    AlgoRequest,
    AlgoResult,
    HoldoutRecord,
    IterationRecord,
    TrialBar,
    TrialStats,
    VariantRecord,
)
from alphadesk.pipelines.algo.nodes import LAB_STATE, LabNodeDeps, LabNodes, LabState
from alphadesk.pipelines.algo.report import render_report, strategy_file
from alphadesk.pipelines.algo.tracker import ExperimentTracker
from alphadesk.pipelines.algo.trials import trial_stats
from alphadesk.pipelines.base import NodeFunction, Nodes, PipelineRun
from alphadesk.pipelines.desk.memory import DeskMemory
from alphadesk.pipelines.models import Failure

__all__ = ["LAB_CONFIG", "LESSONS", "StrategyLab"]

_DEFAULT_YEARS = 4
LESSONS = "strategy_lessons"  # the lab's collection in the shared memory store
# The lab's costs: those `alphadesk backtest` uses by default, so a saved strategy run
# there again gives the same figures.
LAB_CONFIG = BacktestConfig(costs=Costs(commission=0.001, slippage=0.0005))


class StrategyLab(AgentPipeline[AlgoRequest, AlgoResult]):
    """The lab's agents, models, memory and backtester. Stateless per run."""

    kind = "algo"
    request_type = AlgoRequest
    result_type = AlgoResult

    def __init__(
        self,
        settings: Settings,
        market: MarketData,
        *,
        model: str | None = None,
        models: Mapping[str, Model] | None = None,
        agents: AlgoAgents | None = None,
        memory: DeskMemory | None = None,
        backtester: Backtester = backtest_variant,
        config: BacktestConfig = LAB_CONFIG,
        backtest_concurrency: int = 4,
    ) -> None:
        self.agents = agents or default_agents()
        super().__init__(
            settings, market, self.agents.all, render_report, model=model, models=models
        )
        self.memory = memory if memory is not None else _open_memory(settings)
        self.backtester, self.config = backtester, config
        self.backtest_concurrency = backtest_concurrency  # sandboxes (processes) at once

    def title(self, request: AlgoRequest) -> str:
        return f"{super().title(request)}: {request.goal}"

    def nodes(self, request: AlgoRequest, run: PipelineRun) -> Nodes:
        """The graph's node functions, bound to one run and the request's three periods:
        the loop's to a market sealed at the end of validation, the holdout's to the whole.

        Raises:
            DataError: No bars for the symbol at ``as_of``.
            WindowTooShort: Too few bars for three periods (names the minimum).
        """
        periods, sealed_at = self._layout(request)
        sealed = seal(self.market, sealed_at)
        tracker = _tracker_path(self.settings, run)
        deps = LabNodeDeps(
            agents=self.agents,
            market=sealed,
            memory=self.memory,
            writes_memory=self.settings.cache is not CacheMode.REPLAY,
            backtester=self.backtester,
            config=self.config,
            backtest_concurrency=self.backtest_concurrency,
            split=_loop_split(sealed, request, periods, sealed_at),
            trial_bar=self.trial_bar(request),
            tracker_file=tracker,
            steps=AgentSteps(run, self.models, self.settings.limits),
            run=run,
        )
        loop = LabNodes(deps, request.model_copy(update={"as_of": sealed_at}))
        special: dict[str, NodeFunction] = {
            "holdout": LAB_STATE.node(
                HoldoutNode(
                    self.market,
                    request,
                    periods,
                    self.backtester,
                    self.config,
                    ExperimentTracker(tracker),
                    run,
                )
            ),
            "finish": LAB_STATE.node(_Finish(deps, request, periods)),
        }
        return lambda name: special[name] if name in special else loop.node(name)

    @staticmethod
    def graph(request: AlgoRequest, node: Nodes) -> StateGraph[LabState]:
        """The lab's graph, the same for every request, with ``node(name)`` as each node."""
        graph = StateGraph(LabState)
        for name in ("research", "develop", "backtest", "gate", "holdout", "finish"):
            graph.add_node(name, node(name))
        graph.add_edge(START, "research")
        graph.add_conditional_edges("research", _unless_failed("develop"), ["develop", "holdout"])
        graph.add_conditional_edges("develop", _unless_failed("backtest"), ["backtest", "holdout"])
        graph.add_edge("backtest", "gate")
        graph.add_conditional_edges("gate", _route, ["develop", "research", "holdout"])
        graph.add_edge("holdout", "finish")
        graph.add_edge("finish", END)
        return graph

    def periods(self, request: AlgoRequest) -> Periods:
        """The request's search, validation and holdout periods, from the trading days of
        its window (the bars' dates only).

        Raises:
            DataError: No bars for the symbol at ``as_of``.
            WindowTooShort: Too few bars for three periods or CSCV's blocks (names the
                minimum).
        """
        return self._layout(request)[0]

    def split(self, request: AlgoRequest) -> Split:
        """The loop's bars (read through the sealed market: none of the holdout) and its
        search and validation periods.

        Raises:
            DataError: No bars for the symbol at ``as_of``.
            WindowTooShort: Too few bars for three periods (names the minimum).
        """
        periods, sealed_at = self._layout(request)
        return _loop_split(seal(self.market, sealed_at), request, periods, sealed_at)

    def trial_bar(self, request: AlgoRequest) -> TrialBar:
        """What the gate asks of the trial figures: the request's, else the settings'."""
        shares = self.settings.lab
        return TrialBar(
            min_deflated_sharpe=request.min_deflated_sharpe or shares.min_deflated_sharpe,
            max_pbo=request.max_pbo or shares.max_pbo,
        )

    def _layout(self, request: AlgoRequest) -> tuple[Periods, datetime]:
        """The three periods, and the instant the loop's market is sealed at: the close of
        the validation period's last bar."""
        index = self.market.daily_bars(request.symbol, request.as_of).frame.index
        start = request.start or (request.as_of - timedelta(days=365 * _DEFAULT_YEARS)).date()
        shares = self.settings.lab
        periods = plan_periods(
            [t.date() for t in index],
            start,
            request.validation or shares.validation,
            request.holdout or shares.holdout,
        )
        sealed_at = max(t for t in index if t.date() <= periods.validation[1])
        return periods, sealed_at.to_pydatetime()


def _loop_split(
    sealed: MarketData, request: AlgoRequest, periods: Periods, sealed_at: datetime
) -> Split:
    """The loop's bars, read through the sealed market, and its two periods."""
    bars = sealed.daily_bars(request.symbol, sealed_at)
    frame, _notes = frame_from_bars(bars)
    return Split(frame, periods.search, periods.validation)


def _open_memory(settings: Settings) -> DeskMemory | None:
    """The lab's lessons: the desk's memory store, in a collection of the lab's own."""
    if not settings.memory.enabled:
        return None
    from alphadesk.memory import SituationMemory

    return SituationMemory(settings.memory_path, collection=LESSONS)


def _tracker_path(settings: Settings, run: PipelineRun) -> Path:
    folder = run.run_dir or settings.data_dir / "algo" / run.run_id
    return folder / "experiments.jsonl"


@dataclass(frozen=True)
class _Finish:
    """The last node: the best variant so far, its strategy file, the chart, the result."""

    deps: LabNodeDeps
    request: AlgoRequest
    periods: Periods

    async def __call__(self, state: LabState) -> LabState:
        request, periods = self.request, self.periods
        records, iterations = state.get("records", []), state.get("iterations", [])
        last = iterations[-1] if iterations else None
        verdict, budget = state.get("verdict"), state.get("budget")
        best = choose(records, last.gate.best_variant if last else None)
        decision, reason = _outcome(verdict, budget, last, best)
        holdout = state.get("holdout")
        files = self._files(records, best, {e.iteration: e.trials for e in iterations}, holdout)
        result = AlgoResult(
            symbol=request.symbol,
            as_of=request.as_of,
            decision=decision,
            reason=reason,
            stage=verdict.stage if verdict else None,
            goal=request.goal,
            criteria=[str(c) for c in parse_goal(request.goal)],
            in_sample=periods.search,
            out_of_sample=periods.validation,
            holdout_period=periods.holdout,
            fact_sheets=state.get("sheets", []),
            brief=state.get("brief"),
            iterations=iterations,
            variants=[r.without_returns() for r in records],
            best=best.without_returns() if best else None,
            budget=budget,
            trials=trial_stats(records, best) if records else None,
            trial_bar=self.deps.trial_bar,
            holdout=holdout,
            agents=state.get("reports", []),
            data_missing=sorted(set(state.get("missing", []))),
            run_id=self.deps.run.run_id,
            **files,
        )
        return {"result": result}

    def _files(
        self,
        records: list[VariantRecord],
        best: VariantRecord | None,
        trials: dict[int, TrialStats | None],
        holdout: HoldoutRecord | None,
    ) -> dict[str, str | None]:
        request, tracker = self.request, self.deps.tracker_file
        files: dict[str, str | None] = {
            "tracker_file": str(tracker) if tracker.exists() else None,
            "strategy_file": None,
            "trajectory_chart": None,
        }
        folder = tracker.parent
        if best is not None and best.error is None:
            path = folder / "strategy.py"
            path.write_text(strategy_file(request, best), encoding="utf-8")
            files["strategy_file"] = str(path)
        if records:
            title = f"{request.symbol}: {request.goal}"
            chart = save_trajectory_chart(
                records, folder / "trajectory.png", title[:70], trials, holdout
            )
            files["trajectory_chart"] = str(chart)
        return files


def _outcome(
    verdict: Failure | None,
    budget: str | None,
    last: IterationRecord | None,
    best: VariantRecord | None,
) -> tuple[str, str]:
    so_far = (
        f"the best variant so far is {best.variant_id} {best.name} (score {best.score:.2f})"
        if best
        else "no variant was backtested"
    )
    if verdict:
        return "failed", f"{verdict.reason}; {so_far}"
    if budget:
        return "BUDGET_EXHAUSTED", f"{budget} before the goal was met: {so_far}"
    if last is not None and last.gate.decision == "SUCCESS":
        assert best is not None and last.trials is not None
        t = last.trials
        return "SUCCESS", (
            f"{best.variant_id} {best.name} meets the goal in and out of sample, and survives "
            f"its {t.trials} trials (deflated Sharpe ratio {t.deflated_sharpe:.1%}, PBO "
            f"{t.pbo:.1%})"
        )
    return "ABANDON", f"the gate abandoned the search: {so_far}"


def _unless_failed(node: str) -> Callable[..., Awaitable[str]]:
    def route(state: LabState) -> str:
        return "holdout" if state.get("verdict") else node

    return LAB_STATE.route(route)


def _next_step(state: LabState) -> str:
    if state.get("verdict") or state.get("budget"):
        return "holdout"
    decision = state["iterations"][-1].gate.decision
    if decision in ("SUCCESS", "ABANDON"):
        return "holdout"
    return "research" if decision == "RESEARCH" else "develop"


_route = LAB_STATE.route(_next_step)

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

from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Literal, TypedDict
from zoneinfo import ZoneInfo

from langgraph.graph import END, START, StateGraph
from pydantic import AwareDatetime, BaseModel, Field, model_validator

from alphadesk.agents.csp.models import CspConstraints
from alphadesk.cluster import RayCluster
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.data.calendar import NEW_YORK, session_close, sessions_between
from alphadesk.data.universe import bundled_membership
from alphadesk.llm.base import Model
from alphadesk.pipelines.base import NodeFunction, Nodes, PipelineRun
from alphadesk.pipelines.csp.candidates import save_table
from alphadesk.pipelines.csp.fanout import FanOut, Outcome
from alphadesk.pipelines.csp.models import CspRequest, CspResult, Depth
from alphadesk.pipelines.csp.pipeline import CspPipeline
from alphadesk.pipelines.csp.prefilter import ScreenCheck, ScreenResult, ranked
from alphadesk.pipelines.models import PipelineRequest, PipelineResult
from alphadesk.pipelines.runner import PipelineRunner

__all__ = [
    "Outcome",
    "ScreenCounts",
    "ScreenHistory",
    "ScreenPipeline",
    "ScreenRequest",
    "rebalancing_dates",
    "run_screens",
]


class ScreenRequest(PipelineRequest):
    """A universe to screen on one or more dates (session closes)."""

    # Both set from the fields below (any value given is replaced), so nobody passes them.
    symbol: str = Field("", description="What is screened: the index, or the symbols.")
    as_of: datetime = Field(datetime.min.replace(tzinfo=UTC), description="The last date.")
    symbols: list[str] = Field(min_length=1)
    dates: list[AwareDatetime] = Field(min_length=1)  # point in time needs a zone
    depth: Depth = "quick"
    model: str | None = Field(None, description="Every agent's model; None: the settings.")
    constraints: CspConstraints = Field(default_factory=CspConstraints)
    universe: str | None = Field(
        None,
        description="An index (sp500, nasdaq100, dow30): on each date only its members of "
        "that day among `symbols` are screened.",
    )

    @model_validator(mode="before")
    @classmethod
    def _derived(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        symbols, dates = data.get("symbols"), data.get("dates")
        if not isinstance(symbols, list) or not isinstance(dates, list) or not dates:
            return data  # the field validators say what is wrong
        label = data.get("universe") or (
            ", ".join(map(str, symbols)) if len(symbols) <= 3 else f"{len(symbols)} symbols"
        )
        return {**data, "symbol": label, "as_of": dates[-1]}

    def symbols_on(self, day: datetime) -> list[str]:
        """The symbols screened on ``day``: the index members of that day, if any index."""
        if self.universe is None:
            return self.symbols
        session = day.astimezone(ZoneInfo(NEW_YORK)).date()
        members = {m.symbol for m in bundled_membership().members(self.universe, session)}
        return [s for s in self.symbols if s in members]

    def desk_requests(self) -> list[CspRequest]:
        """One desk request per symbol and date screened."""
        return [
            CspRequest(symbol=s, as_of=day, depth=self.depth, constraints=self.constraints)
            for day in self.dates
            for s in self.symbols_on(day)
        ]


class ScreenCounts(BaseModel):
    """How a screen's symbol-dates ended."""

    dates: int
    symbol_dates: int
    filtered: int = Field(description="Turned away by the pre-filter, before any model call.")
    errors: int = Field(description="Failed unexpectedly: neither filtered nor analysed.")
    analysed: int
    selected: int
    failed: int = Field(description="Desk runs that failed.")


class ScreenHistory(PipelineResult):
    """Every date's screen, its counts, and where the table of all outcomes was saved."""

    decision: Literal["completed"] = "completed"
    screens: list[ScreenResult]
    counts: ScreenCounts
    table: list[Path] = Field(description="candidates.csv and candidates.parquet")

    @property
    def outcomes(self) -> int:
        return sum(len(s.checks) for s in self.screens)

    def decided(self) -> dict[str, Any]:
        """Every symbol-date's check and what the desk decided (not its runs, their timings
        nor the table's folder): what a replay of the screen must reproduce."""
        return {
            "counts": self.counts.model_dump(mode="json"),
            "screens": [
                {
                    "as_of": screen.as_of.isoformat(),
                    "checks": [check.model_dump(mode="json") for check in screen.checks],
                    "results": [result.decided() for result in screen.results],
                }
                for screen in self.screens
            ],
        }


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


_REPORTED = 10  # selections listed per date in the report


class ScreenState(TypedDict, total=False):
    """Graph state; plain JSON so every checkpoint can be stored and resumed."""

    request: dict[str, Any]
    outcomes: list[dict[str, Any]]  # {"as_of": ..., "check": ..., "result": ...}
    result: dict[str, Any]


class ScreenPipeline:
    """The screen: where its symbol-dates run (see ``FanOut``) and with which models."""

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
        self.settings, self.market = settings, market
        self.model, self.models = model, models
        self.workers, self.concurrency, self.cluster = workers, concurrency, cluster
        self.charts, self.on_outcome, self.pool = charts, on_outcome, pool

    @property
    def model_label(self) -> str:
        """The desk runs' models (a request naming its model runs them with that one)."""
        return CspPipeline(
            self.settings, self.market, model=self.model, models=self.models
        ).model_label

    def title(self, request: ScreenRequest) -> str:
        first, last = request.dates[0].date(), request.dates[-1].date()
        when = str(first) if first == last else f"{first}..{last} ({len(request.dates)} dates)"
        index = f" of the {request.universe} members" if request.universe else ""
        return f"csp screen {when}, {len(request.symbols)} symbols{index}"

    def report(self, result: ScreenHistory) -> str:
        return _report(result)

    def fanout(self, request: ScreenRequest) -> FanOut:
        """Where and how widely ``request``'s symbol-dates run."""
        return FanOut(
            settings=self.settings,
            market=self.market,
            model=request.model or self.model,
            models=self.models,
            workers=self.workers,
            concurrency=self.concurrency,
            cluster=self.cluster,
            charts=self.charts,
            on_outcome=self.on_outcome,
            pool=self.pool,
        )

    def nodes(self, request: ScreenRequest, run: PipelineRun) -> Nodes:
        """The graph's node functions, bound to one run and the request's fan-out."""
        fanout = self.fanout(request)
        return _ScreenNodes(fanout, request, run, self.settings.runs_dir / run.run_id).node

    @staticmethod
    def graph_shape(request: ScreenRequest) -> Hashable:
        """The graph is the same for every request."""
        return ()

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


@dataclass(frozen=True)
class _ScreenNodes:
    """One screen's nodes: its fan-out, its request and its run."""

    fanout: FanOut
    request: ScreenRequest
    run: PipelineRun
    default_dir: Path  # where the table goes when the run has no folder of its own

    def node(self, name: str) -> NodeFunction:
        return {"screen": self.screen, "finish": self.finish}[name]

    async def screen(self, state: ScreenState) -> dict[str, Any]:
        outcomes = await self.fanout.run(self.request.desk_requests())
        return {"outcomes": [_dumped(o) for o in outcomes]}

    async def finish(self, state: ScreenState) -> dict[str, Any]:
        # In the request's order of symbols, whatever order the workers finished in.
        order = {symbol: i for i, symbol in enumerate(self.request.symbols)}
        outcomes = sorted(
            (_loaded(o) for o in state.get("outcomes", [])), key=lambda o: order[o[1].symbol]
        )
        screens = [
            ranked(day, [(check, result) for when, check, result in outcomes if when == day])
            for day in self.request.dates
        ]
        table = save_table(self.run.run_dir or self.default_dir, outcomes)
        history = ScreenHistory(
            symbol=self.request.symbol,
            as_of=self.request.as_of,
            screens=screens,
            counts=_counts(screens),
            table=table,
            run_id=self.run.run_id,
        )
        return {"result": history.model_dump(mode="json")}


def _dumped(outcome: Outcome) -> dict[str, Any]:
    day, check, result = outcome
    return {
        "as_of": day.isoformat(),
        "check": check.model_dump(mode="json"),
        "result": None if result is None else result.model_dump(mode="json"),
    }


def _loaded(data: dict[str, Any]) -> Outcome:
    result = data["result"]
    return (
        datetime.fromisoformat(data["as_of"]),
        ScreenCheck.model_validate(data["check"]),
        None if result is None else CspResult.model_validate(result),
    )


def _counts(screens: Sequence[ScreenResult]) -> ScreenCounts:
    results = [r for s in screens for r in s.results]
    return ScreenCounts(
        dates=len(screens),
        symbol_dates=sum(len(s.checks) for s in screens),
        filtered=sum(len(s.filtered) for s in screens),
        errors=sum(len(s.errors) for s in screens),
        analysed=len(results),
        selected=sum(r.decision == "select" for r in results),
        failed=sum(r.decision == "failed" for r in results),
    )


def _report(history: ScreenHistory) -> str:
    """The screen in Markdown: its counts, then each date's best puts and its errors."""
    c = history.counts
    lines = [
        f"# CSP screen: {history.symbol}",
        "",
        f"{c.symbol_dates} symbol-dates on {c.dates} date(s): {c.filtered} filtered out before "
        f"any model call, {c.analysed} analysed by the desk ({c.selected} selected, "
        f"{c.failed} failed), {c.errors} errors.",
    ]
    for screen in history.screens:
        lines += _date_section(screen)
    lines += ["", "Every outcome: " + ", ".join(p.name for p in history.table)]
    return "\n".join(lines) + "\n"


def _date_section(screen: ScreenResult) -> list[str]:
    selected = [r for r in screen.results if r.decision == "select"]
    lines = [
        "",
        f"## {screen.as_of.date()}",
        "",
        f"{len(screen.checks)} screened, {len(screen.filtered)} filtered out, "
        f"{len(screen.results)} analysed, {len(selected)} selected.",
    ]
    if selected:
        lines += ["", "| # | symbol | put | dte | premium | delta | %/week |", "|---" * 7 + "|"]
    for rank, result in enumerate(selected[:_REPORTED], 1):
        o = result.options
        put = f"{o.best_expiration} {o.best_strike:g}" if o else "-"
        dte, premium = (str(o.dte), f"{o.premium:.2f}") if o else ("-", "-")
        delta = f"{o.delta:.2f}" if o and o.delta is not None else "-"
        roc = f"{o.weekly_roc:.2f}" if o and o.weekly_roc is not None else "-"
        lines.append(f"| {rank} | {result.symbol} | {put} | {dte} | {premium} | {delta} | {roc} |")
    if screen.errors:
        lines += ["", "Errors (neither filtered out nor analysed):", ""]
        lines += [f"- {check.symbol}: {check.error}" for check in screen.errors]
    return lines


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

"""The screen's graph nodes: every symbol-date through its fan-out, then each date ranked and
the table saved. Nodes read and write the typed state (``ScreenState``); the graph keeps it
as JSON, converted at each node by ``SCREEN_STATE``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from typing_extensions import TypedDict  # pydantic reads a TypedDict of it on Python 3.11

from alphadesk.pipelines.base import NodeFunction, PipelineRun, StateCodec
from alphadesk.pipelines.screen.candidates import save_table
from alphadesk.pipelines.screen.fanout import FanOut
from alphadesk.pipelines.screen.models import (
    ScreenCounts,
    ScreenHistory,
    ScreenOutcome,
    ScreenRequest,
)
from alphadesk.pipelines.screen.prefilter import ScreenResult, ranked

__all__ = ["SCREEN_STATE", "ScreenNodeDeps", "ScreenNodes", "ScreenState"]


class ScreenState(TypedDict, total=False):
    """Graph state, typed; the graph keeps it as JSON (``SCREEN_STATE``) so every checkpoint
    can be stored and resumed."""

    outcomes: list[ScreenOutcome]
    result: ScreenHistory


SCREEN_STATE = StateCodec(ScreenState)


@dataclass(frozen=True)
class ScreenNodeDeps:
    """What the nodes of one screen need: where its symbol-dates run, the run itself, and
    where its table goes when the run has no folder of its own."""

    fanout: FanOut
    run: PipelineRun
    default_dir: Path


@dataclass(frozen=True)
class ScreenNodes:
    """The graph's nodes for one request, bound to their dependencies."""

    deps: ScreenNodeDeps
    request: ScreenRequest

    def node(self, name: str) -> NodeFunction:
        """The function of the graph node ``name``."""
        return SCREEN_STATE.node(getattr(self, name))

    async def screen(self, state: ScreenState) -> ScreenState:
        outcomes = await self.deps.fanout.run(self.request.desk_requests())
        return {"outcomes": [ScreenOutcome.of(outcome) for outcome in outcomes]}

    async def finish(self, state: ScreenState) -> ScreenState:
        request, run = self.request, self.deps.run
        # In the request's order of symbols, whatever order the workers finished in.
        order = {symbol: i for i, symbol in enumerate(request.symbols)}
        outcomes = sorted(
            (o.outcome for o in state.get("outcomes", [])), key=lambda o: order[o[1].symbol]
        )
        screens = [
            ranked(day, [(check, result) for when, check, result in outcomes if when == day])
            for day in request.dates
        ]
        table = save_table(run.run_dir or self.deps.default_dir, outcomes)
        history = ScreenHistory(
            symbol=request.symbol,
            as_of=request.as_of,
            screens=screens,
            counts=_counts(screens),
            table=table,
            run_id=run.run_id,
        )
        return {"result": history}


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

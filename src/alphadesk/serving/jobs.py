"""The servers' runs besides a plain pipeline run (``alphadesk.pool.run_pipeline``) and an
assistant question (``alphadesk.pool.jobs.ask``), as jobs a worker process takes: a
screen and a replay. Each builds what it needs from the worker's settings and market."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from alphadesk.agent.events import EventSink
from alphadesk.data.base import MarketData
from alphadesk.data.symbols import normalize_symbol
from alphadesk.pool import WorkerEnv
from alphadesk.serving.errors import Refusal

if TYPE_CHECKING:
    from alphadesk.pipelines.screen.models import ScreenHistory, ScreenRequest

__all__ = ["replay", "screen", "universe"]


def universe(market: MarketData, symbols: Sequence[str] | None) -> list[str]:
    """The symbols a screen takes: ``symbols`` normalised, else the data's whole universe.

    Raises:
        InvalidSymbol: one of ``symbols`` is not a ticker.
        Refusal: nothing to screen (422).
    """
    chosen = [normalize_symbol(s) for s in symbols] if symbols else market.universe()
    if not chosen:
        raise Refusal(422, "empty_universe", "no symbols to screen",
                      "pass symbols (the data lists no universe)")  # fmt: skip
    return chosen


async def screen(
    env: WorkerEnv, emit: EventSink, order: ScreenRequest, concurrency: int
) -> ScreenHistory:
    """A recorded screen of ``order``'s universe, each survivor's run with its chart, each
    symbol's outcome said (a line of text) as it comes; its history."""
    from alphadesk.pipelines.runner import PipelineRunner
    from alphadesk.pipelines.screen.pipeline import ScreenPipeline

    def heard(outcome: Any) -> None:
        _day, check, result = outcome
        said = "error" if check.error else result.decision if result else "filtered out"
        emit(f"{check.symbol}: {said}")  # type: ignore[arg-type]  # a line the server says as is

    pipeline = ScreenPipeline(
        env.settings, env.market, model=order.model, workers=1,
        concurrency=concurrency, charts=True, on_outcome=heard,
    )  # fmt: skip
    history = await PipelineRunner(env.settings, pipeline, on_event=emit).analyze(order)
    assert history is not None  # no interrupt was asked for
    return history


async def replay(env: WorkerEnv, emit: EventSink, run_id: str) -> tuple[Any, bool]:
    """A recorded run again, from the response cache only; whether it decided the same."""
    from alphadesk.pipelines.runner import replay as replay_run

    return await replay_run(env.settings, env.market, run_id, on_event=emit)

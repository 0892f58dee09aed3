"""The API's runs besides a plain pipeline run (``alphadesk.pool.run_pipeline``), as jobs
a worker process can take: a screen, an assistant question (``alphadesk.pool.jobs.ask``,
shared with the MCP server), a replay. Each builds what it needs from the worker's settings
and market, as the route used to in the server."""

from __future__ import annotations

from typing import Any

from alphadesk.agent.events import EventSink
from alphadesk.pool import WorkerEnv
from alphadesk.pool.jobs import ask

__all__ = ["ask", "replay", "screen"]


async def screen(env: WorkerEnv, emit: EventSink, order: Any, concurrency: int) -> Any:
    """A screen of ``order``'s universe, each survivor's run with its chart; its table."""
    from alphadesk.pipelines.csp.screen import ScreenPipeline
    from alphadesk.pipelines.runner import PipelineRunner

    pipeline = ScreenPipeline(env.settings, env.market, model=order.model, workers=1,
                              concurrency=concurrency, charts=True)  # fmt: skip
    history = await PipelineRunner(env.settings, pipeline, on_event=emit).analyze(order)
    assert history is not None  # no interrupt was asked for
    return history.screens[0]


async def replay(env: WorkerEnv, emit: EventSink, run_id: str) -> tuple[Any, bool]:
    """A recorded run again, from the response cache only; whether it decided the same."""
    from alphadesk.pipelines.runner import replay as replay_run

    return await replay_run(env.settings, env.market, run_id, on_event=emit)

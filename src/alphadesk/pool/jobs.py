"""What a worker process runs: a job is an async function of the worker's environment (its
settings and market) and an event sink, named so it can be sent to another process (a
module-level function, or a ``functools.partial`` of one with picklable arguments)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from alphadesk.agent.events import EventSink
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.data.calendar import close_on_or_before, market_status
from alphadesk.pipelines.base import PIPELINES, build_pipeline, pipeline_class
from alphadesk.pipelines.runner import PipelineRunner

__all__ = ["Job", "WorkerEnv", "ask", "run_pipeline", "sendable", "warm_up"]


@dataclass(frozen=True)
class WorkerEnv:
    """What every job of a process shares: the settings and one market (its caches)."""

    settings: Settings
    market: MarketData


Job = Callable[[WorkerEnv, EventSink], Awaitable[Any]]


async def run_pipeline(
    env: WorkerEnv,
    emit: EventSink,
    kind: str,
    request: Any,
    *,
    model: str | None = None,
    run_id: str | None = None,
) -> Any:
    """One recorded run of the pipeline of ``kind`` (as ``PipelineRunner.analyze``)."""
    pipeline = build_pipeline(kind, env.settings, env.market, model=model)
    runner = PipelineRunner(env.settings, pipeline, on_event=emit)
    return await runner.analyze(request, run_id=run_id)


async def ask(env: WorkerEnv, emit: EventSink, question: Any, model: str | None) -> Any:
    """One question to the assistant (a ``ChatRequest``); its ``ChatResult``."""
    from alphadesk.pipelines.assistant import AssistantPipeline

    pipeline = AssistantPipeline(env.settings, env.market, model=model)
    return await pipeline.ask(question, emit)


def sendable(settings: Settings) -> Settings:
    """``settings`` as a plain ``Settings`` another process can unpickle: one loaded from a
    file is an instance of a class made on the fly, which pickle cannot name."""
    fields = {name: getattr(settings, name) for name in Settings.model_fields}
    return Settings.model_construct(_fields_set=set(settings.model_fields_set), **fields)


def warm_up() -> None:
    """Build what every process's first run would otherwise build on its way (about 5 s on
    a busy machine, which a client would wait through for its first event): the pipelines'
    modules and the exchange calendar."""
    for kind in PIPELINES:
        pipeline_class(kind)
    now = datetime.now(UTC)
    close_on_or_before(now.date())
    market_status(now)

"""The MCP desk tools' runs as jobs for the server's ``Runs`` (worker processes, or this
process; the desk tools are run tools, as those of ``run_tools.py``): a desk's verdict on
one symbol (the screen and the assistant's answer are the servers' shared jobs,
:mod:`alphadesk.serving.jobs` and :func:`alphadesk.pool.jobs.ask`). Each builds its pipeline
from the worker's settings and market, so a run's CPU work never stalls the server's other
clients."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import partial

from alphadesk.agent.events import EventSink
from alphadesk.pool import Runs, WorkerEnv
from alphadesk.tools.assistant.deps import SCREEN_DESK, DeskRunner, DeskVerdict

__all__ = ["PooledDesk", "desk_verdict", "pooled_desks"]


async def desk_verdict(
    env: WorkerEnv, emit: EventSink, desk: str, symbol: str, as_of: datetime, model: str | None
) -> DeskVerdict:
    """The verdict of the desk registered as ``desk`` on ``symbol`` at ``as_of``."""
    from alphadesk.pipelines.assistant.desks import desk_runners

    return await desk_runners(env.settings, env.market, model, emit)[desk].run(symbol, as_of)


@dataclass(frozen=True)
class PooledDesk:
    """A desk runner whose run goes to ``runs`` (the desk tools' ``ChatDeps.desks``)."""

    runs: Runs
    desk: str
    model: str | None
    on_event: EventSink

    async def run(self, symbol: str, as_of: datetime) -> DeskVerdict:
        job = partial(desk_verdict, desk=self.desk, symbol=symbol, as_of=as_of, model=self.model)
        verdict: DeskVerdict = await self.runs.call(job, self.on_event)
        return verdict


def pooled_desks(runs: Runs, model: str | None, on_event: EventSink) -> dict[str, DeskRunner]:
    """Every desk a desk tool may call, each run through ``runs``."""
    desks = ("csp", "trading", SCREEN_DESK)
    return {desk: PooledDesk(runs, desk, model, on_event) for desk in desks}

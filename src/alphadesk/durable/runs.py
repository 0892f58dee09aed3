"""Temporal behind the pool's interface: ``await runs.run(kind, request, on_event)`` sends
the run to the Temporal workers instead of this machine's processes, and hands back the
pipeline's typed result as :class:`~alphadesk.pool.WorkerPool` does.

Only pipeline runs cross (their graphs are what a workflow replays); a job function
(``runs.call``) has no workflow to run in, and is refused with how to run it instead.
"""

from __future__ import annotations

from typing import Any

from alphadesk.agent.events import EventSink
from alphadesk.config import Settings
from alphadesk.durable.jobs import DEFAULT_QUEUE, Timeouts
from alphadesk.pipelines.base import pipeline_class
from alphadesk.pool.jobs import Job
from alphadesk.pool.pool import Runs

__all__ = ["TemporalRuns"]


class TemporalRuns(Runs):
    """Pipeline runs on the Temporal workers at ``address`` (``alphadesk worker``).

    Args:
        settings: Where this side follows the run's events (a data folder it shares with
            the workers; elsewhere it only waits for the result).
        address: The Temporal server, ``host:port``.
        task_queue: The queue the workers poll.
        charts: Whether the workers draw each report's charts.
    """

    def __init__(
        self,
        settings: Settings,
        address: str,
        *,
        task_queue: str = DEFAULT_QUEUE,
        namespace: str = "default",
        charts: bool = True,
        timeouts: Timeouts | None = None,
    ) -> None:
        self.settings, self.address, self.task_queue = settings, address, task_queue
        self.namespace, self.charts, self.timeouts = namespace, charts, timeouts

    async def call(self, job: Job, on_event: EventSink | None = None) -> Any:
        """Refused: only pipeline runs go to Temporal.

        Raises:
            TypeError: always.
        """
        raise TypeError(
            "a job function cannot run on Temporal: run a pipeline with "
            "`await runs.run(kind, request)`, or use a WorkerPool for other jobs"
        )

    async def run(
        self,
        kind: str,
        request: Any,
        on_event: EventSink | None = None,
        *,
        model: str | None = None,
        run_id: str | None = None,
    ) -> Any:
        """The run of the pipeline of ``kind`` on ``request``, done by a Temporal worker;
        its typed result.

        Raises:
            ValueError: a pipeline that cannot run on Temporal.
            RuntimeError: no Temporal server at the address.
            DurableRunFailed: the workflow failed (its cause in the message).
        """
        from alphadesk.durable.client import run_durably

        result = await run_durably(
            self.settings, kind, request, address=self.address, model=model,
            charts=self.charts, task_queue=self.task_queue, namespace=self.namespace,
            timeouts=self.timeouts, on_event=on_event, run_id=run_id,
        )  # fmt: skip
        return pipeline_class(kind).result_type.model_validate(result)

"""Temporal behind the pool's interface, the one way to send a run to Temporal:
``await runs.run(kind, request, on_event)`` starts the run as a workflow on the Temporal
workers instead of this machine's processes, follows it, and hands back the pipeline's
typed result as :class:`~alphadesk.pool.WorkerPool` does.

The run is recorded by the workers under a run id chosen here (the workflow id is
``alphadesk-<run id>``), so it is known before anything runs. Following reads the run's
events from the run store as the workers write them, when this machine shares the
workers' data folder; elsewhere it simply waits for the result.

Only pipeline runs cross (their graphs are what a workflow replays); a job function
(``runs.call``) has no workflow to run in, and is refused with how to run it instead.
Temporal itself (an optional extra) is imported when a run is sent, so the errors below
can be named by a server that has none.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
from dataclasses import dataclass
from typing import Any

from alphadesk.agent.events import EventSink
from alphadesk.config import Settings
from alphadesk.durable.wire import DEFAULT_QUEUE, Timeouts, WorkflowInput, workflow_id
from alphadesk.pipelines.base import pipeline_class
from alphadesk.pipelines.events import parse_event
from alphadesk.pool.jobs import Job
from alphadesk.pool.pool import Runs
from alphadesk.store import RunStore
from alphadesk.store.runs import new_run_id

__all__ = ["DurableRunFailed", "TemporalRuns", "TemporalUnavailable"]

_POLL_S = 0.25


class DurableRunFailed(RuntimeError):
    """The workflow failed (not a pipeline's typed failure, which is a result): its cause."""


class TemporalUnavailable(RuntimeError):
    """Temporal is not installed, or no Temporal server answers at the address."""


class TemporalRuns(Runs):
    """Pipeline runs on the Temporal workers at ``address`` (``alphadesk worker``).

    Args:
        settings: Where this side follows the run's events (a data folder it shares with
            the workers; elsewhere it only waits for the result).
        address: The Temporal server, ``host:port``.
        task_queue: The queue the workers poll.
        namespace: The Temporal namespace.
        charts: Whether the workers draw each report's charts.
        timeouts: How long the workflow waits on a worker.

    Raises:
        TemporalUnavailable: the Temporal extra is not installed.
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
        if importlib.util.find_spec("temporalio") is None:
            raise TemporalUnavailable(
                "Temporal is not installed: pip install 'alphadesk[temporal]'"
            )
        self.settings, self.address, self.task_queue = settings, address, task_queue
        self.namespace, self.charts = namespace, charts
        self.timeouts = timeouts or Timeouts()

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
        its typed result. ``on_event`` sees the run's events as they are recorded.

        Raises:
            ValueError: a pipeline that cannot run on Temporal.
            TemporalUnavailable: no Temporal server at the address.
            DurableRunFailed: the workflow failed (its cause in the message).
        """
        from temporalio.client import WorkflowFailureError

        from alphadesk.durable.server import connect
        from alphadesk.durable.workflow import PipelineWorkflow, durable_pipeline, innermost_cause

        durable_pipeline(kind)
        client = await connect(self.address, self.namespace)
        job = WorkflowInput(
            kind=kind,
            request=request.model_dump(mode="json"),
            run_id=run_id or new_run_id(),
            model=model,
            charts=self.charts,
            timeouts=self.timeouts,
        )
        handle = await client.start_workflow(
            PipelineWorkflow.run, job, id=workflow_id(job.run_id), task_queue=self.task_queue
        )
        store = RunStore(self.settings.store_path)
        follower = _Follower(store, job.run_id, on_event) if on_event else None
        following = asyncio.create_task(follower.follow()) if follower else None
        try:
            result = await handle.result()
        except WorkflowFailureError as exc:
            raise DurableRunFailed(f"workflow {handle.id} failed: {innermost_cause(exc)}") from None
        finally:
            if follower is not None and following is not None:
                following.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await following
                follower.forward()  # the events written after the last look
        return pipeline_class(kind).result_type.model_validate(result)


@dataclass
class _Follower:
    """Hands ``on_event`` a run's events as the workers record them."""

    store: RunStore
    run_id: str
    on_event: EventSink
    seen: int = 0

    async def follow(self) -> None:
        while True:
            self.forward()
            await asyncio.sleep(_POLL_S)

    def forward(self) -> None:
        """The events recorded since the last look."""
        events = self.store.events(self.run_id)
        for body in events[self.seen :]:
            event = parse_event(body)
            if event is not None:
                self.on_event(event)
        self.seen = len(events)

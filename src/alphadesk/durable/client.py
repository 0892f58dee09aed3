"""Submitting a pipeline run to Temporal and following it to its result.

The run is recorded by the workers under a run id chosen here (the workflow id is
``alphadesk-<run id>``), so it is known before anything runs. Following reads the run's
events from the run store as the workers write them, when this machine shares the
workers' data folder; elsewhere it simply waits for the result.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from temporalio.client import WorkflowFailureError, WorkflowHandle

from alphadesk.agent.events import EventSink
from alphadesk.config import Settings
from alphadesk.durable.jobs import DEFAULT_QUEUE, PipelineJob, Timeouts
from alphadesk.durable.server import connect
from alphadesk.durable.workflow import PipelineWorkflow, durable_pipeline, innermost_cause
from alphadesk.pipelines.events import parse_event
from alphadesk.store import RunStore
from alphadesk.store.runs import new_run_id

__all__ = ["DurableRunFailed", "run_durably", "workflow_id"]

_POLL_S = 0.25


class DurableRunFailed(RuntimeError):
    """The workflow failed (not a pipeline's typed failure, which is a result): its cause."""


def workflow_id(run_id: str) -> str:
    return f"alphadesk-{run_id}"


async def run_durably(
    settings: Settings,
    kind: str,
    request: BaseModel,
    *,
    address: str,
    model: str | None = None,
    charts: bool = True,
    task_queue: str = DEFAULT_QUEUE,
    namespace: str = "default",
    timeouts: Timeouts | None = None,
    on_event: EventSink | None = None,
    run_id: str | None = None,
) -> dict[str, Any]:
    """Run ``request`` on the ``kind`` pipeline as a Temporal workflow; returns the result as
    JSON once a worker finished it. ``on_event`` sees the run's events as they are recorded.

    Raises:
        ValueError: a pipeline that cannot run on Temporal.
        RuntimeError: no Temporal server at ``address``.
        DurableRunFailed: the workflow failed (e.g. a non-retryable error on a worker).
    """
    durable_pipeline(kind)
    client = await connect(address, namespace)
    job = PipelineJob(
        kind=kind,
        request=request.model_dump(mode="json"),
        run_id=run_id or new_run_id(),
        model=model,
        charts=charts,
        timeouts=timeouts or Timeouts(),
    )
    handle = await client.start_workflow(
        PipelineWorkflow.run, job, id=workflow_id(job.run_id), task_queue=task_queue
    )
    follower = _Follower(RunStore(settings.store_path), job.run_id, on_event) if on_event else None
    following = asyncio.create_task(follower.follow()) if follower else None
    try:
        return await _result(handle)
    finally:
        if follower is not None and following is not None:
            following.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await following
            follower.forward()  # the events written after the last look


async def _result(handle: WorkflowHandle[Any, dict[str, Any]]) -> dict[str, Any]:
    try:
        return await handle.result()
    except WorkflowFailureError as exc:
        raise DurableRunFailed(f"workflow {handle.id} failed: {innermost_cause(exc)}") from None


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

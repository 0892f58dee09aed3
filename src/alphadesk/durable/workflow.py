"""A pipeline run as a Temporal workflow: the pipeline's own graph, walked in the workflow,
each node an activity on the worker that holds the run.

The workflow first has some worker take the run on (``claim_run`` on the shared queue),
which answers with its own queue; every node then runs there. If that worker dies, its
node is not picked up within ``Timeouts.pickup`` and the workflow has another worker take
the run over, then runs the node again there. Completed nodes are in the workflow's
history and never run again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    CancelledError,
    TimeoutError,
    TimeoutType,
)

with workflow.unsafe.imports_passed_through():
    from datetime import timedelta

    from pydantic import ValidationError

    from alphadesk.data.errors import DataError, ProviderUnavailable
    from alphadesk.data.errors import RateLimited as DataRateLimited
    from alphadesk.durable.wire import NodeCall, WorkflowInput
    from alphadesk.llm.base import ModelError
    from alphadesk.pipelines.base import NodeFunction, pipeline_class
    from alphadesk.store import RunConflict, RunNotFound

__all__ = ["RETRY", "PipelineWorkflow", "durable_pipeline", "innermost_cause", "never_retried"]


def _family(cls: type[Exception]) -> list[type[Exception]]:
    return [cls, *(c for sub in cls.__subclasses__() for c in _family(sub))]


def never_retried() -> list[str]:
    """The errors a retry cannot mend, by class name (how Temporal matches them): a model
    error the engine does not retry (a refused key, a replay with no recorded answer), data
    that is not there or not configured, a run already finished or unknown, a request or a
    setting that does not validate (``ValueError``: an unknown model string, say)."""
    model = [c for c in _family(ModelError) if not getattr(c, "retryable", False)]
    data = [
        c for c in _family(DataError) if not issubclass(c, DataRateLimited | ProviderUnavailable)
    ]
    fixed = [RunConflict, RunNotFound, ValidationError, ValueError]
    return sorted({c.__name__ for c in (*model, *data, *fixed)})


_CANCELLED = "the workflow was cancelled"

RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(minutes=1),
    maximum_attempts=5,
    non_retryable_error_types=never_retried(),
)


@workflow.defn(name="alphadesk.pipeline")
class PipelineWorkflow:
    """Runs one pipeline job; returns its result as JSON."""

    def __init__(self) -> None:
        self._queue: str | None = None
        self._moving = asyncio.Lock()  # concurrent nodes that lose their worker move once

    @workflow.run
    async def run(self, job: WorkflowInput) -> dict[str, Any]:
        try:
            pipeline = durable_pipeline(job.kind)
            request = pipeline.request_type.model_validate(job.request)
        except ValueError as exc:  # raised here it would retry the workflow task forever
            raise ApplicationError(str(exc), non_retryable=True) from None
        graph = pipeline.graph(request, lambda name: self._node(job, name))
        try:
            self._queue = await self._claim(job)
            state = await graph.compile().ainvoke({})  # the nodes are bound to the request
            result: dict[str, Any] = await self._on_worker(
                job,
                lambda: workflow.execute_activity(
                    "alphadesk.finish_run", args=[job, state], **self._options(job)
                ),
            )
        except ActivityError as exc:
            cause = innermost_cause(exc)
            cancelled = isinstance(cause, CancelledError)  # a node's, by the workflow's cancel
            await self._fail(job, _CANCELLED if cancelled else str(cause))
            raise
        except asyncio.CancelledError:  # cancelled between nodes
            await self._fail(job, _CANCELLED)
            raise
        return result

    async def _fail(self, job: WorkflowInput, reason: str) -> None:
        """Mark the run failed with ``reason``, so it never reads ``running`` forever."""
        await workflow.execute_activity(
            "alphadesk.fail_run",
            args=[job, f"{reason} (workflow {workflow.info().workflow_id})"],
            start_to_close_timeout=timedelta(seconds=job.timeouts.pickup),
            retry_policy=RETRY,
        )

    def _node(self, job: WorkflowInput, name: str) -> NodeFunction:
        async def run(state: dict[str, Any]) -> dict[str, Any]:
            call = NodeCall(job=job, node=name, state=dict(state))
            update: dict[str, Any] = await self._on_worker(
                job,
                lambda: workflow.execute_activity(
                    "alphadesk.run_node", call, summary=name, **self._options(job)
                ),
            )
            return update

        return run

    async def _claim(self, job: WorkflowInput) -> str:
        queue: str = await workflow.execute_activity(
            "alphadesk.claim_run",
            job,
            start_to_close_timeout=timedelta(seconds=job.timeouts.pickup),
            retry_policy=RETRY,
        )
        return queue

    async def _on_worker(self, job: WorkflowInput, start: Callable[[], Awaitable[Any]]) -> Any:
        """``start()`` on the worker that holds the run; when that worker is gone, another
        worker takes the run over and ``start()`` runs again there."""
        while True:
            queue = self._queue
            try:
                return await start()
            except ActivityError as exc:
                if not _worker_gone(exc):
                    raise
                async with self._moving:
                    if self._queue == queue:  # not moved yet by a node lost alongside
                        workflow.logger.warning("worker %s is gone; moving the run", queue)
                        self._queue = await self._claim(job)

    def _options(self, job: WorkflowInput) -> dict[str, Any]:
        return {
            "task_queue": self._queue,
            "schedule_to_start_timeout": timedelta(seconds=job.timeouts.pickup),
            "start_to_close_timeout": timedelta(seconds=job.timeouts.node),
            "heartbeat_timeout": timedelta(seconds=job.timeouts.heartbeat),
            "retry_policy": RETRY,
        }


def durable_pipeline(kind: str) -> Any:
    """The pipeline class of ``kind`` if it can run as a workflow (it exposes its graph).

    Raises:
        ValueError: no such pipeline, or one that cannot run on Temporal.
    """
    pipeline = pipeline_class(kind)
    if not hasattr(pipeline, "graph"):
        raise ValueError(f"the {kind} pipeline cannot run on Temporal: it has no graph")
    return pipeline


def innermost_cause(exc: BaseException) -> BaseException:
    """The error a worker raised, under the layers Temporal wraps it in."""
    while (cause := getattr(exc, "cause", None)) is not None:
        exc = cause
    return exc


def _worker_gone(exc: ActivityError) -> bool:
    """Nobody picked the activity up from the worker's own queue: the worker is gone."""
    cause = exc.cause
    return isinstance(cause, TimeoutError) and cause.type == TimeoutType.SCHEDULE_TO_START

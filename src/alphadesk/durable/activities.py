"""A worker's activities: take a run on, run one node of its graph, record its result.

A worker keeps each run it works on open (its recorder, session and node functions), so
the nodes of one run share one store writer and one ledger, as in a local run; the workflow
sends every node of a run to the worker that holds it (its own task queue). A node that
raises closes the run here, so its retry resumes the run from the store, whose journal
answers every model call made so far for free.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Any

from temporalio import activity

from alphadesk.agent.events import BaseEvent, EventSink
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.durable.wire import NodeCall, WorkflowInput
from alphadesk.pipelines.base import Nodes, Pipeline, PipelineRun, build_pipeline
from alphadesk.pipelines.recording import RunRecorder
from alphadesk.pipelines.runner import record_result, start_recording
from alphadesk.store import RunNotFound, RunStore

__all__ = ["PipelineActivities"]

logger = logging.getLogger(__name__)

# The events that end a model turn or a tool call: each one is a heartbeat with its name.
_PROGRESS = {"model_response", "tool_finished", "tool_failed"}


@dataclass
class _OpenRun:
    pipeline: Pipeline[Any, Any]
    recorder: RunRecorder
    run: PipelineRun
    nodes: Nodes


class PipelineActivities:
    """The activities of one worker process; ``queue`` is the worker's own task queue."""

    def __init__(self, settings: Settings, market: MarketData, queue: str) -> None:
        self.settings, self.market, self.queue = settings, market, queue
        self.store = RunStore(settings.store_path)
        self._pipelines: dict[tuple[str, str | None], Pipeline[Any, Any]] = {}
        self._runs: dict[str, _OpenRun] = {}

    @activity.defn(name="alphadesk.claim_run")
    async def claim_run(self, job: WorkflowInput) -> str:
        """Take the run on in this worker: record it (the first time) or take it over from a
        worker that is gone. Returns the task queue its nodes go to from now on."""
        self._open(job)
        logger.info("run %s (%s) taken on by %s", job.run_id, job.kind, self.queue)
        return self.queue

    @activity.defn(name="alphadesk.run_node")
    async def run_node(self, call: NodeCall) -> dict[str, Any]:
        """Run one node of the run's graph on ``call.state``; returns its state update."""
        run = self._open(call.job)
        beating = asyncio.create_task(_keep_alive(call.job.timeouts.heartbeat / 3, call.node))
        try:
            return await run.nodes(call.node)(call.state)
        except BaseException:
            self._close(call.job.run_id, run)
            raise
        finally:
            beating.cancel()

    @activity.defn(name="alphadesk.finish_run")
    async def finish_run(self, job: WorkflowInput, state: dict[str, Any]) -> dict[str, Any]:
        """Record the run's result (report, result file, artefacts); returns the result."""
        record = self.store.get(job.run_id)
        if record.result is not None:  # recorded already, by an attempt that died after it
            return record.result
        run = self._open(job)
        result = run.pipeline.result_type.model_validate(state["result"])
        assert run.run.run_dir is not None  # every durable run has its folder
        saved = record_result(run.pipeline, run.recorder, run.run.run_dir, result)
        del self._runs[job.run_id]
        logger.info("run %s finished: %s", job.run_id, saved.decision)
        return saved.model_dump(mode="json")

    @activity.defn(name="alphadesk.fail_run")
    async def fail_run(self, job: WorkflowInput, reason: str) -> None:
        """Record that the workflow failed (an error no retry mends): the run reads
        ``failed`` with the reason, not ``running`` forever."""
        self._close(job.run_id, self._runs.get(job.run_id))
        try:
            record = self.store.get(job.run_id)
        except RunNotFound:  # it failed before it was recorded
            return
        if record.status in ("running", "interrupted"):  # never over a finished record
            self.store.finish(job.run_id, status="failed", error=reason)
        logger.warning("run %s failed: %s", job.run_id, reason)

    def _open(self, job: WorkflowInput) -> _OpenRun:
        """The run as this worker holds it: recorded anew, or resumed from the store.

        Synchronous on purpose: concurrent nodes of a run (the trading desk's analysts) must not
        open it twice, and its store reads and writes take milliseconds."""
        if job.run_id in self._runs:
            return self._runs[job.run_id]
        pipeline = self._pipeline(job.kind, job.model)
        request = pipeline.request_type.model_validate(job.request)
        workflow = activity.info().workflow_id
        try:
            recorder = RunRecorder.resume(self.store, job.run_id, workflow=workflow)
        except RunNotFound:
            recorder = start_recording(
                self.store, pipeline, request, run_id=job.run_id, workflow=workflow
            )
        run_dir = self.settings.runs_dir / job.run_id
        run_dir.mkdir(parents=True, exist_ok=True)
        run = PipelineRun(
            run_id=job.run_id,
            ledger=recorder.ledger,
            emit=_heartbeating(recorder.emit),
            run_dir=run_dir,
            charts=job.charts,
            journal=recorder.journal,
        )
        opened = _OpenRun(pipeline, recorder, run, pipeline.nodes(request, run))
        self._runs[job.run_id] = opened
        return opened

    def _close(self, run_id: str, run: _OpenRun | None) -> None:
        """Close ``run`` if this worker still holds it as it was (a node failing late, while
        a retry has opened the run again, leaves the new one alone)."""
        if run is not None and self._runs.get(run_id) is run:
            del self._runs[run_id]
            run.recorder.close()

    def _pipeline(self, kind: str, model: str | None) -> Pipeline[Any, Any]:
        """One pipeline per kind and model (a pipeline is stateless per analysis)."""
        if (kind, model) not in self._pipelines:
            built = build_pipeline(kind, self.settings, self.market, model=model)
            self._pipelines[kind, model] = built
        return self._pipelines[kind, model]


def _heartbeating(emit: EventSink) -> EventSink:
    """``emit``, and a heartbeat with the agent's name at every model turn and tool call."""

    def on_event(event: BaseEvent) -> None:
        emit(event)
        kind = getattr(event, "kind", "")
        if kind in _PROGRESS and activity.in_activity():
            activity.heartbeat(f"{event.agent}: {kind}")

    return on_event


async def _keep_alive(every: float, node: str) -> None:
    """Heartbeat while a node runs, so a slow model call does not read as a lost worker."""
    with contextlib.suppress(asyncio.CancelledError):
        while True:
            activity.heartbeat(f"{node}: running")
            await asyncio.sleep(every)

"""The one runner every pipeline shares: each run recorded (events, ledger, report, result,
charts), resumable from its checkpoints, and replayable from the response cache.

A pipeline (``pipelines.base.Pipeline``) gives the runner its request and result models, a
graph, the graph's nodes bound to one run, and a Markdown report of a result; the runner
runs the graph. The CLI, the API and the tests call ``PipelineRunner.analyze`` and nothing
else.
"""

from __future__ import annotations

import asyncio
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from alphadesk.agent.events import EventSink
from alphadesk.config import CacheMode, Settings
from alphadesk.data.base import MarketData
from alphadesk.pipelines.base import (
    PIPELINES,
    DirectAnswer,
    Pipeline,
    PipelineRun,
    build_pipeline,
    run_graph,
)
from alphadesk.pipelines.models import PipelineRequest, PipelineResult
from alphadesk.pipelines.recording import RunRecorder
from alphadesk.store import RunStore
from alphadesk.store.private import private_folder, write_private
from alphadesk.store.redact import redact_json

__all__ = ["PipelineRunner", "record_result", "replay", "start_recording"]

RequestT = TypeVar("RequestT", bound=BaseModel)
ResultT = TypeVar("ResultT", bound=PipelineResult)

# Files a pipeline leaves in its run folder that are recorded with the run: charts, the
# strategy lab's experiment tracker and winning strategy, a screen's table of candidates.
_ARTIFACTS = (
    ("*.png", "image/png"),
    ("*.jsonl", "application/jsonl"),
    ("*.py", "text/x-python"),
    ("*.csv", "text/csv"),
    ("*.parquet", "application/vnd.apache.parquet"),
)


class PipelineRunner(Generic[RequestT, ResultT]):
    """Runs one pipeline's analyses, at most ``concurrency`` at a time, each one recorded.

    With ``charts`` each run's report gets its charts (drawn once, at the end of the run);
    a screen leaves them out unless asked. Without ``checkpoints`` a run keeps no
    checkpoint file, so it cannot be resumed midway: for runs asked again whole when
    stopped (an evaluation's decisions), sparing a database made, synced and deleted per
    run, and its record is written in fewer, larger batches.
    """

    def __init__(
        self,
        settings: Settings,
        pipeline: Pipeline[RequestT, ResultT],
        *,
        on_event: EventSink | None = None,
        concurrency: int = 4,
        charts: bool = True,
        checkpoints: bool = True,
    ) -> None:
        self.settings, self.pipeline = settings, pipeline
        self.store = RunStore(settings.store_path)
        self.charts, self.checkpoints = charts, checkpoints
        self._on_event = on_event
        self._slots = asyncio.Semaphore(concurrency)

    async def preflight(self, request: PipelineRequest) -> None:
        """Fail fast, before any run is recorded, when the symbol has no data at as_of.

        Raises:
            DataError: e.g. NoData naming close matches for an unknown symbol.
        """
        await asyncio.to_thread(self.pipeline.market.daily_bars, request.symbol, request.as_of)

    async def analyze(
        self,
        request: RequestT,
        *,
        resume_run_id: str | None = None,
        interrupt_after: list[str] | None = None,
        run_id: str | None = None,
    ) -> ResultT | None:
        """Analyse one request, or resume an interrupted run. None if stopped at a checkpoint.

        A resumed run goes on with the request it was started with (its checkpoints are of
        that request), whatever ``request`` says. ``run_id`` names a new run in advance (a
        server tells its client before it starts).
        """
        async with self._slots:
            recorder = self._recorder(request, resume_run_id, run_id)
            run_dir = self.settings.runs_dir / recorder.run_id
            private_folder(run_dir)
            try:
                if resume_run_id is not None:
                    recorded = self.store.get(resume_run_id).request
                    request = self.pipeline.request_type.model_validate(recorded)
                checkpoint_file = (
                    self.settings.data_dir / "checkpoints" / f"{recorder.run_id}.sqlite"
                )
                direct = _direct(self.pipeline, request, resume_run_id)
                with (
                    _checkpoints(checkpoint_file)
                    if self.checkpoints and direct is None
                    else nullcontext()
                ) as checkpoints:
                    run = PipelineRun(
                        run_id=recorder.run_id,
                        ledger=recorder.ledger,
                        emit=recorder.emit,
                        run_dir=run_dir,
                        checkpointer=checkpoints,
                        resume=resume_run_id is not None,
                        interrupt_after=interrupt_after,
                        charts=self.charts,
                        journal=recorder.journal,
                    )
                    result = await (
                        direct(run) if direct is not None
                        else run_graph(self.pipeline, request, run)
                    )  # fmt: skip
            except BaseException as exc:  # record the interruption, then let it propagate
                recorder.finish(status="interrupted", result=None, error=repr(exc))
                raise
            if result is None:
                hint = f"stopped at a checkpoint; continue with --resume {recorder.run_id}"
                recorder.finish(status="interrupted", result=None, error=hint)
                return None
            saved = record_result(self.pipeline, recorder, run_dir, result)
            if direct is None:
                from alphadesk.pipelines.checkpoints import discard

                discard(checkpoint_file)  # a finished run is never resumed
            return saved

    async def analyze_many(self, requests: list[RequestT]) -> list[ResultT]:
        """Analyse several requests concurrently (within the concurrency limit)."""
        results = await asyncio.gather(*(self.analyze(r) for r in requests))
        return [r for r in results if r is not None]

    def _recorder(
        self, request: RequestT, resume_run_id: str | None, run_id: str | None
    ) -> RunRecorder:
        if resume_run_id is not None:
            return RunRecorder.resume(self.store, resume_run_id, self._on_event)
        return start_recording(
            self.store, self.pipeline, request, self._on_event, run_id,
            resumable=self.checkpoints,
        )  # fmt: skip


def _direct(
    pipeline: Pipeline[RequestT, ResultT], request: RequestT, resume_run_id: str | None
) -> DirectAnswer[ResultT] | None:
    """How ``pipeline`` answers ``request`` without its graph, if it does (a greeting to
    the assistant); never for a resumed run, which goes on from its checkpoints."""
    answer = getattr(pipeline, "direct", None)
    return None if answer is None or resume_run_id is not None else answer(request)


def _checkpoints(path: Path) -> AbstractContextManager[Any]:
    from alphadesk.pipelines.checkpoints import run_checkpoints

    return run_checkpoints(path)


def start_recording(
    store: RunStore,
    pipeline: Pipeline[RequestT, Any],
    request: RequestT,
    on_event: EventSink | None = None,
    run_id: str | None = None,
    workflow: str | None = None,
    *,
    resumable: bool = True,
) -> RunRecorder:
    """Record a new run of ``pipeline`` on ``request`` (under ``run_id`` when given; as part of
    a Temporal ``workflow`` for a durable run); one not ``resumable`` in fewer writes."""
    return RunRecorder.start(
        store,
        kind=pipeline.kind,
        title=pipeline.title(request),
        request=request,
        as_of=getattr(request, "as_of", None),  # a question's may be None: "now"
        model=pipeline.model_label,
        on_event=on_event,
        run_id=run_id,
        workflow=workflow,
        resumable=resumable,
    )


def record_result(
    pipeline: Pipeline[Any, ResultT], recorder: RunRecorder, run_dir: Path, result: ResultT
) -> ResultT:
    """Save a finished run: its result without any API key a model (or a hostile text it
    read) put in it, the Markdown report, the result file and the artefacts the pipeline
    left in ``run_dir``. Returns the redacted result: what is returned, printed, saved and
    reported is the same."""
    dumped = result.model_dump(mode="json")
    cleaned = redact_json(dumped)
    if cleaned != dumped:
        result = pipeline.result_type.model_validate(cleaned)
    report = run_dir / "report.md"
    write_private(report, pipeline.report(result))
    recorder.save("report.md", report, "text/markdown")
    payload = run_dir / "result.json"
    write_private(payload, result.model_dump_json(indent=2))
    recorder.save("result.json", payload, "application/json")
    for pattern, media_type in _ARTIFACTS:
        for path in sorted(run_dir.glob(pattern)):
            recorder.save(path.name, path, media_type)
    recorder.finish(status=result.decision, result=result)
    return result


async def replay(
    settings: Settings, market: MarketData, run_id: str, *, on_event: EventSink | None = None
) -> tuple[PipelineResult, bool]:
    """Run a recorded run again with the response cache in replay-only mode.

    Returns the new result and whether its decision matches the recorded one. A request
    that was never recorded fails loudly (CacheMiss) instead of calling a provider.

    Raises:
        RunNotFound: no such run.
        ValueError: a kind of run that cannot be replayed, or a run that never finished.
    """
    run = RunStore(settings.store_path).get(run_id)
    if run.kind not in PIPELINES:
        raise ValueError(f"run {run_id} is a {run.kind} run, which cannot be replayed")
    if run.result is None:
        raise ValueError(f"run {run_id} did not finish ({run.status}); resume it with --resume")
    model = run.model if run.model and "," not in run.model else None
    replaying = settings.model_copy(update={"cache": CacheMode.REPLAY})
    pipeline = build_pipeline(run.kind, replaying, market, model=model)
    recorded = pipeline.result_type.model_validate(run.result)
    runner = PipelineRunner(replaying, pipeline, on_event=on_event)
    result = await runner.analyze(pipeline.request_type.model_validate(run.request))
    assert result is not None  # no interrupt was asked for
    return result, result.decided() == recorded.decided()

"""Running the desk: one recorded, resumable run per symbol, saved with its report, JSON
result and charts. The single entry point the CLI, the API and the tests call."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from alphadesk.agent.events import EventSink
from alphadesk.config import CacheMode, Settings
from alphadesk.data.base import MarketData
from alphadesk.llm.base import Model
from alphadesk.pipelines.csp.desk import CspDesk
from alphadesk.pipelines.csp.models import CspRequest, CspResult
from alphadesk.pipelines.csp.report import render_report
from alphadesk.pipelines.recording import RunRecorder
from alphadesk.store import RunStore

__all__ = ["CspRunner", "replay"]


class CspRunner:
    """Analyses symbols with one desk, at most ``concurrency`` at a time."""

    def __init__(
        self,
        settings: Settings,
        market: MarketData,
        *,
        model: str | None = None,
        models: Mapping[str, Model] | None = None,
        on_event: EventSink | None = None,
        concurrency: int = 4,
    ) -> None:
        self.settings = settings
        self.desk = CspDesk(settings, market, model=model, models=models)
        self.store = RunStore(settings.store_path)
        self._on_event = on_event
        self._slots = asyncio.Semaphore(concurrency)

    @property
    def model_label(self) -> str:
        """The models the desk runs with, e.g. ``rules`` or ``openai/gpt-4o``."""
        names = {self.desk.model(agent).name for agent in self.desk.agents.names}
        return ", ".join(sorted(names))

    async def preflight(self, request: CspRequest) -> None:
        """Fail fast, before any run is recorded, when the symbol has no data at as_of.

        Raises:
            DataError: e.g. NoData naming close matches for an unknown symbol.
        """
        await asyncio.to_thread(self.desk.market.daily_bars, request.symbol, request.as_of)

    async def analyze(
        self,
        request: CspRequest,
        *,
        resume_run_id: str | None = None,
        interrupt_after: list[str] | None = None,
    ) -> CspResult | None:
        """Analyse one symbol, or resume an interrupted run. None if stopped at a checkpoint."""
        async with self._slots:
            if resume_run_id is None:
                recorder = RunRecorder.start(
                    self.store,
                    kind="csp",
                    title=f"csp {request.symbol}",
                    request=request,
                    as_of=request.as_of,
                    model=self.model_label,
                    on_event=self._on_event,
                )
            else:
                recorder = RunRecorder.resume(self.store, resume_run_id, self._on_event)
            run_dir = self.settings.runs_dir / recorder.run_id
            run_dir.mkdir(parents=True, exist_ok=True)
            try:
                async with AsyncSqliteSaver.from_conn_string(
                    str(self.settings.data_dir / "checkpoints.sqlite")
                ) as checkpoints:
                    result = await self.desk.analyze(
                        request,
                        run_id=recorder.run_id,
                        ledger=recorder.ledger,
                        on_event=recorder.emit,
                        run_dir=run_dir,
                        checkpointer=checkpoints,
                        resume=resume_run_id is not None,
                        interrupt_after=interrupt_after,
                    )
            except BaseException as exc:  # record the interruption, then let it propagate
                recorder.finish(status="interrupted", result=None, error=repr(exc))
                raise
            if result is None:
                hint = f"stopped at a checkpoint; continue with --resume {recorder.run_id}"
                recorder.finish(status="interrupted", result=None, error=hint)
                return None
            _save(recorder, run_dir, result)
            return result

    async def analyze_many(self, requests: list[CspRequest]) -> list[CspResult]:
        """Analyse several symbols concurrently (within the concurrency limit)."""
        results = await asyncio.gather(*(self.analyze(r) for r in requests))
        return [r for r in results if r is not None]


def _save(recorder: RunRecorder, run_dir: Path, result: CspResult) -> None:
    report = run_dir / "report.md"
    report.write_text(render_report(result), encoding="utf-8")
    recorder.save("report.md", report, "text/markdown")
    payload = run_dir / "result.json"
    payload.write_text(result.model_dump_json(indent=2), encoding="utf-8")
    recorder.save("result.json", payload, "application/json")
    for chart in sorted(run_dir.glob("*.png")):
        recorder.save(chart.name, chart, "image/png")
    recorder.finish(status=result.decision, result=result)


async def replay(
    settings: Settings, market: MarketData, run_id: str, *, on_event: EventSink | None = None
) -> tuple[CspResult, bool]:
    """Run a recorded csp run again with the response cache in replay-only mode.

    Returns the new result and whether its decision matches the recorded one. A request
    that was never recorded fails loudly (CacheMiss) instead of calling a provider.

    Raises:
        RunNotFound: no such run.
        ValueError: not a csp run, or a run that never finished.
    """
    run = RunStore(settings.store_path).get(run_id)
    if run.kind != "csp":
        raise ValueError(f"run {run_id} is a {run.kind} run, not csp")
    if run.result is None:
        raise ValueError(f"run {run_id} did not finish ({run.status}); resume it with --resume")
    recorded = CspResult.model_validate(run.result)
    model = run.model if run.model and "," not in run.model else None
    replaying = settings.model_copy(update={"cache": CacheMode.REPLAY})
    runner = CspRunner(replaying, market, model=model, on_event=on_event)
    result = await runner.analyze(CspRequest.model_validate(run.request))
    assert result is not None  # no interrupt was asked for
    return result, _decided(result) == _decided(recorded)


def _decided(result: CspResult) -> dict[str, object]:
    """What a result decided, without ids, timings and model commentary."""
    return result.model_dump(mode="json", exclude={"run_id", "agents"})

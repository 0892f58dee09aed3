"""Recorded runs: list, detail, report, chart, events, and replay from the cache."""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import FileResponse, PlainTextResponse

from alphadesk.api.context import ApiContext
from alphadesk.api.errors import ApiError, ErrorBody
from alphadesk.api.models import ReplayResponse, RunDetail, RunSummary
from alphadesk.api.streaming import unless_gone
from alphadesk.serving import jobs
from alphadesk.store import RunStore
from alphadesk.store.runs import RunRecord

__all__ = ["router"]

router = APIRouter(prefix="/runs", tags=["runs"], responses={404: {"model": ErrorBody}})


def _ctx(request: Request) -> ApiContext:
    ctx: ApiContext = request.app.state.ctx
    return ctx


def _store(request: Request) -> RunStore:
    return RunStore(_ctx(request).settings.store_path)


def _summary(store: RunStore, run: RunRecord) -> dict[str, Any]:
    ledger = store.ledger(run.id)
    tokens = sum(int(e.get("input_tokens", 0)) + int(e.get("output_tokens", 0)) for e in ledger)
    return run.model_dump(exclude={"request", "result", "error"}) | {
        "requests": sum(not e.get("cached") for e in ledger),
        "cost_usd": round(sum(float(e.get("cost_usd", 0.0)) for e in ledger), 6),
        "tokens": tokens,
    }


@router.get("", response_model=list[RunSummary])
async def list_runs(
    request: Request,
    kind: Annotated[str | None, Query(max_length=32, description="Only this pipeline's.")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 20,
) -> Any:
    """The latest runs, newest first."""
    store = _store(request)
    return [_summary(store, run) for run in store.recent(limit=limit, kind=kind)]


@router.get("/{run_id}", response_model=RunDetail)
async def get_run(request: Request, run_id: str) -> Any:
    """One run as recorded: request, result (or error), cost, artifact names."""
    store = _store(request)
    run = store.get(run_id)
    names = [a.name for a in store.artifacts(run_id)]
    return _summary(store, run) | {
        "request": run.request,
        "result": run.result,
        "error": run.error,
        "artifacts": names,
    }


def _artifact(request: Request, run_id: str, wanted: str) -> Any:
    store = _store(request)
    store.get(run_id)  # 404 for an unknown run before 404 for a missing artifact
    for artifact in store.artifacts(run_id):
        matches = artifact.name == wanted or (wanted == "*.png" and artifact.name.endswith(".png"))
        if matches and artifact.path.is_file():
            return artifact
    what = "report" if wanted == "report.md" else "chart"
    raise ApiError(404, f"no_{what}", f"run {run_id} has no {what}",
                   "a run that stopped early saves none")  # fmt: skip


@router.get("/{run_id}/report", response_class=PlainTextResponse,
            responses={200: {"content": {"text/markdown": {}}}})  # fmt: skip
async def get_report(request: Request, run_id: str) -> Any:
    """The run's Markdown report."""
    artifact = _artifact(request, run_id, "report.md")
    return PlainTextResponse(artifact.path.read_text(encoding="utf-8"), media_type="text/markdown")


@router.get("/{run_id}/chart", response_class=FileResponse,
            responses={200: {"content": {"image/png": {}}}})  # fmt: skip
async def get_chart(request: Request, run_id: str) -> Any:
    """The run's chart (the first PNG it saved)."""
    return FileResponse(_artifact(request, run_id, "*.png").path, media_type="image/png")


@router.get("/{run_id}/events", response_model=list[dict[str, Any]])
async def get_events(request: Request, run_id: str) -> Any:
    """Every event the run recorded, in order (the same JSON the stream sent)."""
    store = _store(request)
    store.get(run_id)
    return store.events(run_id)


@router.post("/{run_id}/replay", response_model=ReplayResponse,
             responses={409: {"model": ErrorBody}, 429: {"model": ErrorBody}})  # fmt: skip
async def replay_run(request: Request, run_id: str) -> Any:
    """Run a recorded run again from the response cache only (no model call is made) and
    say whether it decided the same."""
    from alphadesk.llm.base import ModelError

    ctx = _ctx(request)
    _store(request).get(run_id)  # 404 before a slot is taken
    slot = ctx.slots.claim()
    try:
        job = partial(jobs.replay, run_id=run_id)
        result, same = await unless_gone(request, ctx.runs.call(job))
    except ValueError as exc:
        raise ApiError(409, "not_replayable", str(exc)) from None
    except ModelError as exc:
        raise ApiError(409, "cache_miss", str(exc), "only recorded model calls replay") from None
    finally:
        slot.release()
    return ReplayResponse(
        replayed=run_id,
        run_id=result.run_id,
        same_decision=same,
        decision=result.decision,
        model_calls=sum(agent.requests for agent in result.agents),
        result=result.model_dump(mode="json"),
    )

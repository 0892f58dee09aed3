"""Saved evaluations (``alphadesk eval``): the list, one table, its equity and drawdown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse

from alphadesk.api.errors import ApiError, ErrorBody

__all__ = ["router"]

router = APIRouter(prefix="/evals", tags=["evaluations"], responses={404: {"model": ErrorBody}})

_HINT = "make one with `alphadesk eval`; GET /evals lists those saved"


def _root(request: Request) -> Path:
    return Path(request.app.state.ctx.settings.data_dir) / "evals"


def _folder(request: Request, name: str) -> Path:
    """The evaluation's folder, by a name GET /evals gave (never a path of the client's)."""
    from alphadesk.pipelines.evaluation.files import saved_evaluations

    if name not in {entry["name"] for entry in saved_evaluations(_root(request))}:
        raise ApiError(404, "no_evaluation", f"no saved evaluation named {name!r}", _HINT)
    return _root(request) / name


@router.get("", response_model=list[dict[str, Any]])
async def list_evals(request: Request) -> Any:
    """Every saved evaluation, newest first: its name and what it evaluated (the spec)."""
    from alphadesk.pipelines.evaluation.files import saved_evaluations

    return saved_evaluations(_root(request))


@router.get("/{name}", response_model=dict[str, Any])
async def get_eval(request: Request, name: str) -> Any:
    """One evaluation's table: the spec and a row per strategy and symbol (and pooled)."""
    import json

    table = _folder(request, name) / "table.json"
    return json.loads(table.read_text(encoding="utf-8"))


@router.get("/{name}/{chart}", response_class=FileResponse,
            responses={200: {"content": {"image/png": {}}}})  # fmt: skip
async def get_eval_chart(request: Request, name: str, chart: str) -> Any:
    """The pooled equity curve (``equity.png``) or drawdown (``drawdown.png``)."""
    from alphadesk.pipelines.evaluation.files import CHARTS

    if chart not in CHARTS:
        raise ApiError(404, "no_chart", f"no chart {chart!r}", f"one of: {', '.join(CHARTS)}")
    path = _folder(request, name) / chart
    if not path.is_file():
        raise ApiError(404, "no_chart", f"evaluation {name!r} has no {chart}", _HINT)
    return FileResponse(path, media_type="image/png")

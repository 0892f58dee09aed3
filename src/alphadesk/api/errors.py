"""Every error as typed JSON, ``{"error": {"type", "message", "hint"}}``; never a trace.

Pipeline and data errors keep their own message (it says how to fix the problem); an
unexpected exception is logged here and answered with a generic 500.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import UnionType
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from alphadesk.data.errors import (
    DataError,
    InvalidSymbol,
    NoData,
    NotConfigured,
    ProviderUnavailable,
    RateLimited,
)
from alphadesk.durable.runs import DurableRunFailed, TemporalUnavailable
from alphadesk.llm.base import ModelError
from alphadesk.pool import WorkerDied
from alphadesk.portfolio.models import OrderRejected
from alphadesk.serving.errors import ErrorBody, Refusal, error_json
from alphadesk.store import RunNotFound

__all__ = ["ApiError", "ClientGone", "ErrorBody", "error_response", "from_exception", "install"]

logger = logging.getLogger(__name__)


class ClientGone(Exception):
    """The client closed the connection before the answer: its run was cancelled."""


class ApiError(Refusal):
    """An error the API answers with ``status`` and a typed body."""


def error_response(
    status: int,
    type_: str,
    message: str,
    hint: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    body = error_json(type_, message, hint)
    return JSONResponse(body, status_code=status, headers=dict(headers or {}))


# Exceptions whose message says it all, in the order they are tried (a subclass first):
# the status, the error's type, and the hint.
_PLAIN: tuple[tuple[type[BaseException] | UnionType, int, str, str | None], ...] = (
    (InvalidSymbol, 422, "invalid_symbol", "pass a ticker such as NVDA"),
    (RateLimited | ProviderUnavailable, 503, "provider_unavailable", "try again later"),
    (NotConfigured, 503, "not_configured", None),
    (DataError, 422, "data_error", None),
    (RunNotFound, 404, "run_not_found", "GET /runs lists the recorded runs"),
    (OrderRejected, 409, "order_rejected", None),
    (ModelError, 502, "model_error", "check the model string and its key"),
    (DurableRunFailed, 502, "durable_run_failed", "see the worker's log"),
    (TemporalUnavailable, 503, "temporal_unavailable", None),
)


def from_exception(exc: BaseException) -> Refusal:
    """The API error an exception of the lower layers stands for (a refusal of the serving
    layer stands for itself)."""
    if isinstance(exc, Refusal):
        return exc
    if isinstance(exc, NoData):
        hint = f"did you mean {', '.join(exc.suggestions)}?" if exc.suggestions else None
        return ApiError(404, "no_data", str(exc), hint or "GET /health lists the data providers")
    for kind, status, type_, fix in _PLAIN:
        if isinstance(exc, kind):
            return ApiError(status, type_, str(exc), fix)
    if isinstance(exc, ClientGone):  # nobody reads this answer
        return ApiError(499, "client_closed", "the client closed the connection: run cancelled")
    if isinstance(exc, WorkerDied):
        return ApiError(503, "worker_died", f"the run stopped: {exc}",
                        "the run is recorded interrupted; start it again")  # fmt: skip
    return ApiError(500, "internal", "the server failed on this request", "see the server log")


def _validation_message(errors: list[Any]) -> str:
    parts = []
    for error in errors[:5]:
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return "; ".join(parts)


async def _on_api_error(_request: Request, exc: Exception) -> JSONResponse:
    error = from_exception(exc)
    if error.status >= 500 and not isinstance(exc, Refusal):
        logger.error("request failed", exc_info=exc)
    return error_response(error.status, error.type, error.message, error.hint)


async def _on_validation(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return error_response(
        422, "validation_error", _validation_message(list(exc.errors())), "see GET /docs"
    )


async def _on_http(request: Request, exc: Exception) -> JSONResponse:
    """Starlette's own errors, typed; their headers kept (``Allow`` on a 405)."""
    assert isinstance(exc, StarletteHTTPException)
    kinds = {404: "not_found", 405: "method_not_allowed", 401: "unauthorized"}
    kind = kinds.get(exc.status_code, "http_error")
    message, hint = str(exc.detail), None
    allow = (exc.headers or {}).get("Allow")
    if exc.status_code == 405 and allow:
        message = f"{request.method} is not allowed on {request.url.path}"
        hint = f"use {allow}"
    return error_response(exc.status_code, kind, message, hint, headers=exc.headers)


def install(app: FastAPI) -> None:
    """Answer every error in the typed shape."""
    app.add_exception_handler(RequestValidationError, _on_validation)
    app.add_exception_handler(StarletteHTTPException, _on_http)
    for kind in (Refusal, ClientGone, DataError, RunNotFound, OrderRejected, ModelError,
                 DurableRunFailed, TemporalUnavailable, Exception):  # fmt: skip
        app.add_exception_handler(kind, _on_api_error)

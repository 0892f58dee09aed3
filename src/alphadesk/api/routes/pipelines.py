"""The pipelines' routes: ``/analyze`` (the trading desk), ``/fund`` (the desk on many
names, then one book's portfolio manager), ``/csp`` (the CSP desk) and ``/screen`` (the CSP
screen); JSON or a live stream."""

from __future__ import annotations

from functools import partial
from typing import Any

from fastapi import APIRouter, Request
from sse_starlette import EventSourceResponse

from alphadesk.agent.events import EventSink
from alphadesk.api.context import ApiContext
from alphadesk.api.errors import ApiError, ErrorBody
from alphadesk.api.models import AnalyzeBody, CspBody, FundBody, ScreenBody
from alphadesk.api.streaming import SSE_RESPONSES, Accepted, release, stream_run, unless_gone
from alphadesk.pipelines.csp.models import CspRequest, CspResult
from alphadesk.pipelines.desk.models import DeskRequest, DeskResult
from alphadesk.pipelines.fund.models import FundRequest, FundResult
from alphadesk.pipelines.screen.prefilter import ScreenResult
from alphadesk.serving import jobs
from alphadesk.store.runs import new_run_id

__all__ = ["router"]

_ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorBody} for code in (404, 422, 429)}

router = APIRouter(tags=["pipelines"], responses=_ERRORS)


def _ctx(request: Request) -> ApiContext:
    ctx: ApiContext = request.app.state.ctx
    return ctx


def _desk_request(ctx: ApiContext, body: AnalyzeBody) -> DeskRequest:
    symbol = ctx.symbol(body.symbol)
    try:
        return DeskRequest.from_settings(
            ctx.settings,
            symbol=symbol,
            as_of=ctx.as_of(body.as_of, [symbol]),
            depth=body.depth,
            analysts=body.analysts,
            rounds=body.rounds,
            risk_rounds=body.risk_rounds,
            memory=body.memory,
        )
    except ValueError as exc:  # a pydantic ValidationError is a ValueError
        raise ApiError(422, "validation_error", str(exc).splitlines()[0]) from None


def _csp_request(ctx: ApiContext, body: CspBody) -> CspRequest:
    symbol = ctx.symbol(body.symbol)
    return CspRequest(
        symbol=symbol,
        as_of=ctx.as_of(body.as_of, [symbol]),
        depth=body.depth,
        parallel_research=body.parallel_research,
        constraints=body.constraints,
    )


async def _fund_request(ctx: ApiContext, body: FundBody) -> FundRequest:
    """The fund's request, each symbol checked against the data and the account read: an
    unknown symbol or account, or an empty universe, records no run."""
    import asyncio

    from alphadesk.pipelines.fund.book import fund_request
    from alphadesk.portfolio import AccountNotFound

    symbols = [ctx.symbol(s) for s in body.symbols or []]
    instant = ctx.as_of(body.as_of, symbols)
    try:
        return await asyncio.to_thread(
            fund_request, ctx.market, ctx.settings.store_path, instant, symbols=symbols,
            universe=body.universe, account=body.account, depth=body.depth,
        )  # fmt: skip
    except AccountNotFound as exc:
        hint = "POST /portfolio/accounts opens one; GET /portfolio/accounts lists them"
        raise ApiError(404, "account_not_found", str(exc), hint) from None
    except ValueError as exc:  # no symbol, both symbols and universe, an unknown index
        raise ApiError(422, "validation_error", str(exc), "give symbols or universe") from None


async def _run(http: Request, kind: str, model: str | None, request: Any) -> Any:
    ctx = _ctx(http)
    ctx.model(model)
    if not isinstance(request, FundRequest):  # a fund's request checked every symbol
        await ctx.preflight(request)  # an unknown symbol: no run recorded
    slot = ctx.slots.claim()
    try:
        return await unless_gone(http, ctx.analyze(kind, model, request))
    finally:
        slot.release()


async def _stream(ctx: ApiContext, kind: str, model: str | None, request: Any) -> Any:
    ctx.model(model)
    if not isinstance(request, FundRequest):
        await ctx.preflight(request)
    slot = ctx.slots.claim()
    run_id = new_run_id()
    accepted = Accepted(run_id=run_id, pipeline=kind, request=request.model_dump(mode="json"))

    async def produce(emit: EventSink) -> Any:
        return await ctx.analyze(kind, model, request, on_event=emit, run_id=run_id)

    return EventSourceResponse(
        stream_run(produce, slot, accepted=accepted), ping=15, background=release(slot)
    )


@router.post("/analyze", response_model=DeskResult)
async def analyze(body: AnalyzeBody, request: Request) -> Any:
    """The trading desk's BUY, HOLD or SELL on one symbol: analysts, a bull/bear debate, a
    trader, a risk discussion and a judge. The run is recorded (see `/runs/{id}`)."""
    ctx = _ctx(request)
    return await _run(request, "desk", body.model, _desk_request(ctx, body))


@router.post("/analyze/stream", responses=SSE_RESPONSES, response_class=EventSourceResponse)
async def analyze_stream(body: AnalyzeBody, request: Request) -> Any:
    """The same run as `/analyze`, as server-sent events: `accepted` (the run's id) at once,
    every agent step, tool call and debate message as it happens, then `result` (the
    decision). Closing the connection cancels the run."""
    ctx = _ctx(request)
    return await _stream(ctx, "desk", body.model, _desk_request(ctx, body))


@router.post("/fund", response_model=FundResult)
async def fund(body: FundBody, request: Request) -> Any:
    """One book over many names: the trading desk on each (each a recorded run), then the
    portfolio manager's target weights within the book's limits and cash, the orders that
    reach them and the cash after; `POST /portfolio/follow` places the orders. The run is
    recorded (see `/runs/{id}`)."""
    ctx = _ctx(request)
    return await _run(request, "fund", body.model, await _fund_request(ctx, body))


@router.post("/fund/stream", responses=SSE_RESPONSES, response_class=EventSourceResponse)
async def fund_stream(body: FundBody, request: Request) -> Any:
    """The same run as `/fund`, as server-sent events: `accepted` at once, each desk's
    start and decision and the manager's step as they happen, then `result`."""
    ctx = _ctx(request)
    return await _stream(ctx, "fund", body.model, await _fund_request(ctx, body))


@router.post("/csp", response_model=CspResult)
async def csp(body: CspBody, request: Request) -> Any:
    """The cash-secured-put desk on one symbol: chart, options and research, then synthesis."""
    ctx = _ctx(request)
    return await _run(request, "csp", body.model, _csp_request(ctx, body))


@router.post("/csp/stream", responses=SSE_RESPONSES, response_class=EventSourceResponse)
async def csp_stream(body: CspBody, request: Request) -> Any:
    """The same run as `/csp`, as server-sent events, ending with `result`."""
    ctx = _ctx(request)
    return await _stream(ctx, "csp", body.model, _csp_request(ctx, body))


@router.post("/screen", response_model=ScreenResult)
async def screen(body: ScreenBody, request: Request) -> Any:
    """Screen a universe for cash-secured puts: cheap checks first, the desk on survivors
    (one recorded run per survivor), best first. The screen is recorded as a run too."""
    from alphadesk.pipelines.screen.models import ScreenRequest

    ctx = _ctx(request)
    model = ctx.model(body.model)
    universe = jobs.universe(ctx.market, body.symbols)
    instant = ctx.as_of(body.as_of, universe)
    order = ScreenRequest(symbols=universe, dates=[instant], depth=body.depth, model=model,
                          constraints=body.constraints)  # fmt: skip
    slot = ctx.slots.claim()
    try:
        job = partial(jobs.screen, order=order, concurrency=body.concurrency)
        history = await unless_gone(request, ctx.runs.call(job))
    finally:
        slot.release()
    return history.screens[0]

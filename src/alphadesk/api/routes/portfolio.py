"""The paper portfolio: valued at an instant, positions at cost, orders, and following a
desk's decision."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ValidationError

from alphadesk.api.context import ApiContext
from alphadesk.api.errors import ApiError, ErrorBody
from alphadesk.api.models import ACCOUNT_PATTERN, FollowBody, OrderBody
from alphadesk.store import Contract, OrderRequest, PaperPortfolio, RunStore
from alphadesk.store.portfolio import Order, Position
from alphadesk.tools.positions import PositionsReport

__all__ = ["router"]

router = APIRouter(
    prefix="/portfolio",
    tags=["portfolio"],
    responses={code: {"model": ErrorBody} for code in (404, 409, 422)},
)

Account = Annotated[str, Query(pattern=ACCOUNT_PATTERN, description="The paper account.")]


class Positions(BaseModel):
    """Cash and open positions at cost, from the order log."""

    account: str
    cash: float
    positions: list[Position]


def _ctx(request: Request) -> ApiContext:
    ctx: ApiContext = request.app.state.ctx
    return ctx


def _book(request: Request) -> PaperPortfolio:
    return PaperPortfolio(_ctx(request).settings.store_path)


@router.get("", response_model=PositionsReport)
async def portfolio(
    request: Request,
    as_of: Annotated[
        date | None,
        Query(
            description="Mark at this date's close. Default: now, or the last close "
            "the data covers for the positions held."
        ),
    ] = None,
    account: Account = "paper",
) -> Any:
    """Cash, positions marked at an instant, P&L and account value."""
    from alphadesk.pipelines.assistant.orders import value_portfolio

    ctx = _ctx(request)
    _, held = _book(request).positions(account)  # no date: the last close they are priced at
    instant = ctx.as_of(as_of, sorted({p.contract.symbol for p in held}))
    return await value_portfolio(ctx.settings, ctx.market, instant, account)


@router.get("/positions", response_model=Positions)
async def positions(request: Request, account: Account = "paper") -> Any:
    """Open positions at cost, and cash."""
    cash, held = _book(request).positions(account)
    return Positions(account=account, cash=cash, positions=held)


@router.get("/transactions", response_model=list[Order])
async def transactions(request: Request, account: Account = "paper") -> Any:
    """Every order of the account, oldest first."""
    return _book(request).orders(account)


@router.post("/orders", response_model=Order, status_code=201)
async def place(body: OrderBody, request: Request) -> Any:
    """Buy or sell shares or option contracts (paper). A stock order without a price fills
    at the close of `as_of`."""
    ctx = _ctx(request)
    instant = ctx.as_of(body.as_of, [ctx.symbol(body.symbol)])
    try:
        contract = Contract(symbol=ctx.symbol(body.symbol), right=body.right,
                            strike=body.strike, expiration=body.expiration)  # fmt: skip
    except ValidationError as exc:  # the validator's own words, not pydantic's trailer
        message = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
        raise ApiError(422, "invalid_contract", message,
                       "e.g. right=put, strike=120, expiration=2021-07-16") from None  # fmt: skip
    price = body.price
    if price is None:
        if contract.is_option:
            raise ApiError(422, "price_required", "an option order needs a price (per share)")
        price = ctx.market.quote(contract.symbol, instant).price  # NoData -> 404
    order = OrderRequest(contract=contract, side=body.side, quantity=body.quantity,
                         price=price, as_of=instant, source="api")  # fmt: skip
    return _book(request).place(order, body.account)


@router.post("/follow", response_model=Order, status_code=201)
async def follow(body: FollowBody, request: Request) -> Any:
    """Place the order a desk's recorded decision stands for: a CSP run sells its put, a
    trading-desk run buys or sells the stock at the judge's entry."""
    from alphadesk.pipelines.assistant.orders import order_from_run

    settings = _ctx(request).settings
    try:
        order = order_from_run(RunStore(settings.store_path), body.run_id, body.quantity)
    except ValueError as exc:  # an unknown run (RunNotFound) is a 404 on its own
        raise ApiError(409, "no_order", str(exc)) from None
    return _book(request).place(order, body.account)

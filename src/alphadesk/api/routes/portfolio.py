"""The paper portfolio: accounts, valued at an instant, positions at cost, orders, and
following a desk's decision."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field, ValidationError

from alphadesk.api.context import ApiContext
from alphadesk.api.errors import ApiError, ErrorBody
from alphadesk.api.models import ACCOUNT_PATTERN, AccountBody, FollowBody, OrderBody
from alphadesk.portfolio import (
    Account,
    AccountExists,
    AccountNotFound,
    AccountReport,
    Contract,
    DamagedAccount,
    Order,
    OrderRejected,
    OrderRequest,
    PaperPortfolio,
    Position,
    account_report,
)
from alphadesk.portfolio.placing import place as place_order
from alphadesk.store import RunStore

__all__ = ["router"]

# The routes that only read SQLite and bars are plain functions: FastAPI runs them in its
# thread pool, so a slow disk never stalls the event loop.

router = APIRouter(
    prefix="/portfolio",
    tags=["portfolio"],
    responses={code: {"model": ErrorBody} for code in (404, 409, 422)},
)

AccountName = Annotated[str, Query(pattern=ACCOUNT_PATTERN, description="The paper account.")]
AsOf = Annotated[date | None, Query(description="Only orders traded by this date's close.")]

_HINTS = {
    "insufficient_cash": "place fewer shares or contracts, or open an account with more cash "
    "(POST /portfolio/accounts)",
    "price_not_verified": 'check the price and as_of, or send "force": true to place it anyway',
}


class Positions(BaseModel):
    """Cash and open positions at cost, from the orders traded by ``as_of``."""

    account: str
    as_of: datetime | None = Field(description="None: every order.")
    cash: float
    collateral: float = Field(description="Cash reserved for the open short puts.")
    positions: list[Position]


@contextmanager
def _refusals() -> Iterator[None]:
    """The portfolio's refusals as typed 4xx answers."""
    try:
        yield
    except AccountNotFound as exc:
        hint = "POST /portfolio/accounts opens one; GET /portfolio/accounts lists them"
        raise ApiError(404, "account_not_found", str(exc), hint) from None
    except AccountExists as exc:
        raise ApiError(409, "account_exists", str(exc)) from None
    except DamagedAccount as exc:
        raise ApiError(409, exc.code, str(exc)) from None
    except OrderRejected as exc:
        raise ApiError(409, exc.code, str(exc), _HINTS.get(exc.code)) from None


def _ctx(request: Request) -> ApiContext:
    ctx: ApiContext = request.app.state.ctx
    return ctx


def _book(request: Request) -> PaperPortfolio:
    return PaperPortfolio(_ctx(request).settings.store_path)


def _instant(request: Request, day: date | None) -> datetime | None:
    return None if day is None else _ctx(request).as_of(day)


@router.get("", response_model=AccountReport)
def portfolio(
    request: Request,
    as_of: Annotated[
        date | None,
        Query(
            description="Mark at this date's close. Default: now, or the last close "
            "the data covers for the positions held."
        ),
    ] = None,
    account: AccountName = "paper",
) -> Any:
    """Cash, positions marked at an instant, P&L and account value; only the orders traded
    by that instant count."""
    ctx = _ctx(request)
    with _refusals():
        book = _book(request)
        _, held = book.positions(account)  # every order: the symbols ever held
        instant = ctx.as_of(as_of, sorted({p.contract.symbol for p in held}))
        return account_report(book, ctx.market, instant, account)


@router.get("/accounts", response_model=list[Account])
def accounts(request: Request) -> Any:
    """The paper accounts and their starting cash."""
    return _book(request).accounts()


@router.post("/accounts", response_model=Account, status_code=201)
def open_account(body: AccountBody, request: Request) -> Any:
    """Open a paper account with its starting cash (the default one, paper, opens itself)."""
    with _refusals():
        return _book(request).open_account(body.name, body.cash)


@router.get("/positions", response_model=Positions)
def positions(request: Request, account: AccountName = "paper", as_of: AsOf = None) -> Any:
    """Open positions at cost, cash and the collateral the short puts reserve."""
    instant = _instant(request, as_of)
    with _refusals():
        book = _book(request).book(account, instant)
    held = [p for p in book.positions.values() if p.quantity]
    return Positions(account=account, as_of=instant, cash=book.cash,
                     collateral=book.collateral(instant), positions=held)  # fmt: skip


@router.get("/transactions", response_model=list[Order])
def transactions(request: Request, account: AccountName = "paper", as_of: AsOf = None) -> Any:
    """The account's orders by trade date (``as_of``), each with when it was recorded
    (``placed_at``) and whether its price was verified or forced."""
    with _refusals():
        return _book(request).orders(account, _instant(request, as_of))


def _place(request: Request, order: OrderRequest, account: str, force: bool) -> Order:
    with _refusals():
        return place_order(_book(request), _ctx(request).market, order, account, force=force)


@router.post("/orders", response_model=Order, status_code=201)
def place(body: OrderBody, request: Request) -> Any:
    """Buy or sell shares or option contracts (paper) on a trade date (`as_of`). A stock
    order without a price fills at that close; a price off the day's range, or a symbol
    without data, needs `force`. A short put needs its strike x 100 in free cash."""
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
    return _place(request, order, body.account, body.force)


@router.post("/follow", response_model=Order | list[Order], status_code=201)
def follow(body: FollowBody, request: Request) -> Any:
    """Place the orders a recorded decision stands for, dated the run's as-of: a CSP run
    sells its put (its strike x 100 per contract must be free cash), a trading-desk run
    buys or sells the stock at the judge's entry (each answers its order); a fund run
    places every order of its rebalance, once (it answers the list)."""
    from alphadesk.pipelines.follow import follow_run

    ctx = _ctx(request)
    with _refusals():
        try:
            placed = follow_run(RunStore(ctx.settings.store_path), _book(request), ctx.market,
                                body.run_id, account=body.account, quantity=body.quantity,
                                force=body.force)  # fmt: skip
        except OrderRejected:
            raise
        except ValueError as exc:  # an unknown run (RunNotFound) is a 404 on its own
            raise ApiError(409, "no_order", str(exc)) from None
    source = placed[0].source if placed else ""
    return placed if source.startswith("fund run") else placed[0]

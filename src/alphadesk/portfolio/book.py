"""Replaying an account's orders in trade-date order: cash, positions, realised P&L, the
collateral its short puts reserve, and the rules each order must keep.

Rules of the paper account, checked at each order's trade date: an order may not leave
less free cash than nothing, free cash being cash less the collateral of the open short
puts (strike x 100 x contracts: cash-secured puts); a stock sale may not exceed the
shares held then (no short stock). Options have a multiplier of 100. A short put's
collateral is released when it is bought back or when it expires (the close of its
expiration day); an expired put stays a position, marked at its intrinsic value. Average
cost accounting: a trade that reduces a position realises
``(price - average cost) x quantity x multiplier`` (sign reversed for shorts). An option
trades only on or before its expiration, and expires on a trading day.

Cash changes in one place, :meth:`Book.apply`; the valuation reads the cash the replay
leaves. A cash dividend is one more entry of the timeline (:class:`DividendCredit`, at the
open of its ex-date, before any order of that instant): the shares held then, i.e. at the
previous close, get the amount each, and a short position pays it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, time
from zoneinfo import ZoneInfo

from alphadesk.data.calendar import close_on_or_before, is_session, local_date
from alphadesk.money import usd
from alphadesk.portfolio.models import (
    Contract,
    DividendCredit,
    DividendPaid,
    InsufficientCash,
    OrderRejected,
    OrderRequest,
    Position,
    PositionValue,
    Valuation,
)

__all__ = [
    "Book",
    "expiration_problem",
    "expired_problem",
    "expires_at",
    "first_new_problem",
    "in_trade_order",
    "replay_orders",
    "valuation",
]

_EPS = 1e-6
_NEW_YORK = ZoneInfo("America/New_York")


def expires_at(contract: Contract) -> datetime:
    """When an option stops being open: the 16:00 New York close of its expiration day."""
    assert contract.expiration is not None
    return datetime.combine(contract.expiration, time(16), _NEW_YORK)


def expired_problem(order: OrderRequest) -> str | None:
    """Why an option order cannot have traded: it expired before its trade date."""
    expiration = order.contract.expiration
    if expiration is None or order.as_of is None:
        return None
    traded = local_date(order.as_of)
    if expiration >= traded:
        return None
    return (
        f"{order.contract.key} expired on {expiration}, before the trade date {traded}: an "
        "option trades on or before its expiration"
    )


def expiration_problem(order: OrderRequest) -> str | None:
    """Why an option order may not be placed: it expired before its trade date, or its
    expiration is not a trading day (options expire on sessions; a date past the
    calendar's end is taken as given)."""
    expiration = order.contract.expiration
    if expiration is None:
        return None
    if is_session(expiration) is False:
        try:
            before = f"; the session before it is {local_date(close_on_or_before(expiration))}"
        except ValueError:  # before the calendar
            before = ""
        return (
            f"{order.contract.key}: {expiration} is not an XNYS trading day, so no option "
            f"expires then; give the expiration's session date{before}"
        )
    return expired_problem(order)


def _collateral(contract: Contract, quantity: float, at: datetime) -> float:
    """Cash a position of ``quantity`` reserves at ``at``: strike x 100 per short put
    contract until it expires."""
    if contract.right != "put" or quantity >= 0 or contract.strike is None:
        return 0.0
    if at >= expires_at(contract):
        return 0.0
    return -quantity * contract.strike * contract.multiplier


@dataclass
class Book:
    """Running state while replaying orders."""

    cash: float
    positions: dict[str, Position]
    realized: float = 0.0
    dividends: list[DividendPaid] = field(default_factory=list)

    def collateral(self, at: datetime | None = None) -> float:
        """Cash reserved at ``at`` (default: now) for the open short puts."""
        when = at or datetime.now(UTC)
        return sum(_collateral(p.contract, p.quantity, when) for p in self.positions.values())

    def held(self, contract: Contract) -> float:
        position = self.positions.get(contract.key)
        return position.quantity if position else 0.0

    def apply(self, entry: OrderRequest | DividendCredit) -> None:
        """The book after ``entry``: an order's position, realised P&L and cash, or a
        dividend's cash to the shares held (none held: nothing)."""
        if isinstance(entry, DividendCredit):
            self._credit(entry)
            return
        order = entry
        key = order.contract.key
        held = self.positions.get(key) or Position(
            contract=order.contract, quantity=0.0, average_cost=0.0
        )
        signed = order.quantity if order.side == "buy" else -order.quantity
        qty, avg, realized = held.quantity, held.average_cost, held.realized_pnl
        mult = order.contract.multiplier
        if abs(qty) < _EPS or (qty > 0) == (signed > 0):
            avg = (abs(qty) * avg + order.quantity * order.price) / (abs(qty) + order.quantity)
        else:
            closed = min(abs(qty), order.quantity)
            gain = closed * (order.price - avg) * mult * (1 if qty > 0 else -1)
            realized += gain
            self.realized += gain
            if order.quantity > abs(qty) + _EPS:  # flipped: the rest opens at this price
                avg = order.price
        qty += signed
        if abs(qty) < _EPS:
            qty, avg = 0.0, 0.0
        opened = held.opened_at if held.quantity else order.as_of
        self.positions[key] = Position(
            contract=order.contract,
            quantity=qty,
            average_cost=avg,
            realized_pnl=realized,
            opened_at=opened,
        )
        self.cash += order.cash_change

    def _credit(self, dividend: DividendCredit) -> None:
        shares = self.held(Contract(symbol=dividend.symbol))
        if abs(shares) < _EPS:
            return
        cash = shares * dividend.amount
        self.cash += cash
        self.dividends.append(
            DividendPaid(
                symbol=dividend.symbol,
                ex_date=dividend.ex_date,
                shares=shares,
                amount=dividend.amount,
                cash=cash,
                source=dividend.source,
            )
        )


def in_trade_order(
    orders: Iterable[OrderRequest], dividends: Iterable[DividendCredit] = ()
) -> list[OrderRequest | DividendCredit]:
    """``orders`` as given (in trade-date order) with ``dividends`` merged in by instant,
    a dividend before an order of the same instant (an order at the ex-date's open is no
    holder of record)."""
    pending = sorted(dividends, key=lambda d: d.as_of)
    merged: list[OrderRequest | DividendCredit] = []
    at = 0
    for order in orders:
        traded = order.as_of or datetime.now(UTC)
        while at < len(pending) and pending[at].as_of <= traded:
            merged.append(pending[at])
            at += 1
        merged.append(order)
    return [*merged, *pending[at:]]


def replay_orders(
    starting_cash: float,
    orders: Iterable[OrderRequest],
    dividends: Iterable[DividendCredit] = (),
) -> Book:
    """Cash, positions and realised P&L after ``orders`` (in the order given) and the
    ``dividends`` merged among them by instant."""
    book = Book(cash=starting_cash, positions={})
    for entry in in_trade_order(orders, dividends):
        book.apply(entry)
    return book


def _describe(order: OrderRequest) -> str:
    day = f" on {order.as_of.date()}" if order.as_of else ""
    return f"{order.side} {order.quantity:g} {order.contract.key} at {order.price:g}{day}"


def _cash_problem(book: Book, order: OrderRequest) -> InsufficientCash | None:
    """Refuse an order that spends free cash the account does not have at its date."""
    at = order.as_of or datetime.now(UTC)
    reserved = book.collateral(at)
    free = book.cash - reserved
    contract = order.contract
    held = book.held(contract)
    signed = order.quantity if order.side == "buy" else -order.quantity
    extra = _collateral(contract, held + signed, at) - _collateral(contract, held, at)
    needed = extra - order.cash_change
    if needed <= _EPS or free - needed >= -_EPS:
        return None
    parts = [f"costs {usd(-order.cash_change)}"] if order.cash_change < 0 else []
    if extra > 0:
        parts.append(f"reserves {usd(extra)} of collateral (strike x 100 x contracts)")
    if order.cash_change > 0:
        parts.append(f"brings {usd(order.cash_change)} of premium")
    message = (
        f"not enough free cash to {_describe(order)}: it {', '.join(parts)}, so it needs "
        f"{usd(needed)} of free cash; the account had {usd(free)} free then "
        f"({usd(book.cash)} cash less {usd(reserved)} reserved for short puts)"
    )
    per_unit = needed / order.quantity
    most = int((max(free, 0.0) + _EPS) // per_unit)
    unit = "contracts" if contract.is_option else "shares"
    message += f"; at most {most} {unit} fit" if most else "; add cash or close positions first"
    return InsufficientCash(message, needed=needed, free=free)


def _problem(book: Book, order: OrderRequest) -> OrderRejected | None:
    """Why ``order`` may not be applied to ``book`` (at its trade date), or None."""
    if order.side == "sell" and not order.contract.is_option:
        have = book.held(order.contract)
        if order.quantity > have + _EPS:
            day = f" on {order.as_of.date()}" if order.as_of else ""
            return OrderRejected(
                f"cannot sell {order.quantity:g} {order.contract.symbol}{day}: the account "
                f"held {have:g} then (short selling stock is not supported in the paper "
                "account)"
            )
    return _cash_problem(book, order)


def _problems(
    starting_cash: float,
    orders: Sequence[OrderRequest],
    dividends: Sequence[DividendCredit] = (),
) -> dict[int, OrderRejected]:
    """The orders of a timeline that break a rule, by position in ``orders``, with the
    ``dividends`` credited among them (their cash can be spent after the ex-date)."""
    book = Book(cash=starting_cash, positions={})
    at = {id(order): i for i, order in enumerate(orders)}
    found: dict[int, OrderRejected] = {}
    for entry in in_trade_order(orders, dividends):
        if isinstance(entry, OrderRequest):
            problem = _problem(book, entry)
            if problem is not None:
                found[at[id(entry)]] = problem
        book.apply(entry)
    return found


def first_new_problem(
    starting_cash: float,
    timeline: Sequence[OrderRequest],
    new: OrderRequest,
    at: int,
    dividends: Sequence[DividendCredit] = (),
) -> OrderRejected | None:
    """Why inserting ``new`` at index ``at`` of ``timeline`` (trade-date order) breaks a
    rule: at its own date or at any later order's. Problems the timeline already had
    (written before these rules) do not count against it."""
    before = _problems(starting_cash, timeline, dividends)
    known = {id(timeline[i]) for i in before}
    changed = [*timeline[:at], new, *timeline[at:]]
    for i, problem in sorted(_problems(starting_cash, changed, dividends).items()):
        order = changed[i]
        if order is new:
            return problem
        if id(order) not in known:
            message = (
                f"this order ({_describe(new)}) would break a later one, "
                f"{getattr(order, 'id', '?')} ({_describe(order)}): {problem}"
            )
            if isinstance(problem, InsufficientCash):
                return InsufficientCash(message, needed=problem.needed, free=problem.free)
            return OrderRejected(message)
    return None


def valuation(
    account: str,
    starting_cash: float,
    book: Book,
    marks: Mapping[str, float | None],
    orders: int,
    at: datetime | None = None,
) -> Valuation:
    """Value a replayed book at ``marks``."""
    rows: list[PositionValue] = []
    unpriced: list[str] = []
    for key, pos in book.positions.items():
        if not pos.quantity:
            continue
        mark = marks.get(key)
        if mark is None:
            unpriced.append(key)
        per_share = pos.average_cost if mark is None else mark
        value = pos.quantity * per_share * pos.contract.multiplier
        rows.append(
            PositionValue(
                key=key,
                contract=pos.contract,
                quantity=pos.quantity,
                average_cost=pos.average_cost,
                cost_basis=pos.cost_basis,
                mark=mark,
                market_value=value,
                unrealized_pnl=value - pos.cost_basis,
                realized_pnl=pos.realized_pnl,
            )
        )
    market_value = sum(r.market_value for r in rows)
    account_value = book.cash + market_value
    return Valuation(
        account=account,
        starting_cash=starting_cash,
        cash=book.cash,
        collateral=book.collateral(at),
        positions=rows,
        market_value=market_value,
        realized_pnl=book.realized,
        unrealized_pnl=sum(r.unrealized_pnl for r in rows),
        account_value=account_value,
        total_pnl=account_value - starting_cash,
        unpriced=unpriced,
        dividends=book.dividends,
        orders=orders,
    )

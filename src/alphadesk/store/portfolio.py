"""The paper portfolio: accounts and their orders in SQLite; cash, positions and P&L from them.

Orders are the only thing written: cash, positions, average cost and realised P&L are
replayed from an account's orders, so they can never drift from the order log. Each order
is checked and inserted in one ``BEGIN IMMEDIATE`` transaction, so concurrent orders from
several threads or processes are serialised: none is lost and none spends cash another
already spent.

Rules of the paper account: a buy needs the cash (no margin); a stock sale may not exceed
the shares held (no short stock); options may be sold to open (premium sellers). Options
have a multiplier of 100. Average cost accounting: a trade that reduces a position
realises ``(price - average cost) x quantity x multiplier`` (sign reversed for shorts).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from alphadesk.store import sqlite

__all__ = [
    "DEFAULT_ACCOUNT",
    "DEFAULT_CASH",
    "Contract",
    "Order",
    "OrderRejected",
    "OrderRequest",
    "PaperPortfolio",
    "Position",
    "PositionValue",
    "Valuation",
    "replay_orders",
]

DEFAULT_ACCOUNT = "paper"
DEFAULT_CASH = 100_000.0
_EPS = 1e-9

_SCHEMA = """
CREATE TABLE IF NOT EXISTS portfolio_accounts (
    name TEXT PRIMARY KEY,
    starting_cash REAL NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS portfolio_orders (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account TEXT NOT NULL REFERENCES portfolio_accounts(name),
    placed_at TEXT NOT NULL,
    as_of TEXT,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS portfolio_orders_account ON portfolio_orders(account, id);
"""


class OrderRejected(ValueError):
    """An order the paper account refuses; the message says why and what would pass."""


class Contract(BaseModel):
    """What is traded: a stock (or ETF, crypto) or a listed option on it."""

    model_config = ConfigDict(frozen=True)

    symbol: str = Field(description="Underlying ticker, upper case.")
    right: Literal["put", "call"] | None = Field(None, description="Set for an option.")
    strike: float | None = Field(None, gt=0)
    expiration: date | None = None

    @model_validator(mode="after")
    def _option_complete(self) -> Contract:
        fields = (self.right, self.strike, self.expiration)
        if any(f is not None for f in fields) and not all(f is not None for f in fields):
            raise ValueError("an option needs right (put/call), strike and expiration")
        return self

    @property
    def is_option(self) -> bool:
        return self.right is not None

    @property
    def multiplier(self) -> int:
        return 100 if self.is_option else 1

    @property
    def key(self) -> str:
        """``AAPL`` or ``SPY 2024-12-20 450P``: one position per key."""
        if not self.is_option:
            return self.symbol
        assert self.expiration is not None and self.right is not None
        return f"{self.symbol} {self.expiration.isoformat()} {self.strike:g}{self.right[0].upper()}"


class OrderRequest(BaseModel):
    """An order to place: buy or sell a quantity of a contract at a price."""

    model_config = ConfigDict(frozen=True)

    contract: Contract
    side: Literal["buy", "sell"]
    quantity: float = Field(gt=0, description="Shares or contracts.")
    price: float = Field(ge=0, description="Per share (per share of the option's 100).")
    fees: float = Field(0.0, ge=0, description="Commission in dollars.")
    as_of: AwareDatetime | None = Field(None, description="The market instant of the fill.")
    source: str = Field("manual", description="Who placed it: manual, a desk run, ...")
    note: str = ""

    @property
    def cash_change(self) -> float:
        """Cash in (positive) or out (negative), fees included."""
        notional = self.quantity * self.price * self.contract.multiplier
        return (notional if self.side == "sell" else -notional) - self.fees


class Order(OrderRequest):
    """An order as recorded."""

    id: int
    account: str
    placed_at: AwareDatetime


class Position(BaseModel):
    """A holding: signed quantity (negative is short), average cost, realised P&L."""

    contract: Contract
    quantity: float
    average_cost: float = Field(description="Per share, positive; 0 when flat.")
    realized_pnl: float = 0.0
    opened_at: datetime | None = None

    @property
    def cost_basis(self) -> float:
        """Signed cost of the open quantity (negative for a short: premium received)."""
        return self.quantity * self.average_cost * self.contract.multiplier


class PositionValue(BaseModel):
    """A position at a mark."""

    key: str
    contract: Contract
    quantity: float
    average_cost: float
    cost_basis: float
    mark: float | None = Field(description="Per share; None when no price was found.")
    market_value: float = Field(description="Signed; at cost when there is no mark.")
    unrealized_pnl: float
    realized_pnl: float


class Valuation(BaseModel):
    """An account at a set of marks: cash, positions, P&L and account value."""

    account: str
    starting_cash: float
    cash: float
    positions: list[PositionValue]
    market_value: float = Field(description="Signed value of the open positions.")
    realized_pnl: float
    unrealized_pnl: float
    account_value: float = Field(description="cash + market_value.")
    total_pnl: float = Field(description="account_value - starting_cash.")
    unpriced: list[str] = Field(default_factory=list, description="Positions held at cost.")
    orders: int


@dataclass
class _Book:
    """Running state while replaying orders."""

    cash: float
    positions: dict[str, Position]
    realized: float = 0.0


def _apply(book: _Book, order: OrderRequest) -> None:
    key = order.contract.key
    held = book.positions.get(key) or Position(
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
        book.realized += gain
        if order.quantity > abs(qty) + _EPS:  # flipped: the rest opens at this price
            avg = order.price
    qty += signed
    if abs(qty) < _EPS:
        qty, avg = 0.0, 0.0
    opened = held.opened_at if held.quantity else order.as_of
    book.positions[key] = Position(
        contract=order.contract,
        quantity=qty,
        average_cost=avg,
        realized_pnl=realized,
        opened_at=opened,
    )
    book.cash += order.cash_change


def replay_orders(starting_cash: float, orders: Iterable[OrderRequest]) -> _Book:
    """Cash, positions and realised P&L after ``orders``, in order."""
    book = _Book(cash=starting_cash, positions={})
    for order in orders:
        _apply(book, order)
    return book


def _check(book: _Book, order: OrderRequest) -> None:
    """Refuse what the paper account does not allow, saying what would pass."""
    after = book.cash + order.cash_change
    if order.side == "buy" and after < -_EPS:
        raise OrderRejected(
            f"not enough cash: the order costs ${-order.cash_change:,.2f} and the account has "
            f"${book.cash:,.2f}; buy fewer or add cash with `alphadesk portfolio reset --cash`"
        )
    if order.side == "sell" and not order.contract.is_option:
        held = book.positions.get(order.contract.key)
        have = held.quantity if held else 0.0
        if order.quantity > have + _EPS:
            raise OrderRejected(
                f"cannot sell {order.quantity:g} {order.contract.symbol}: the account holds "
                f"{have:g} (short selling stock is not supported in the paper account)"
            )


class PaperPortfolio:
    """Paper accounts in one SQLite file, safe to share between threads and processes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        sqlite.create(path, _SCHEMA)

    def _connect(self, *, immediate: bool = False) -> AbstractContextManager[sqlite3.Connection]:
        return sqlite.transaction(self.path, immediate=immediate)

    # -- accounts ---------------------------------------------------------------------------

    def open_account(self, name: str = DEFAULT_ACCOUNT, cash: float = DEFAULT_CASH) -> None:
        """Create the account with ``cash`` if it does not exist (an existing one is kept)."""
        if cash < 0:
            raise OrderRejected(f"starting cash must not be negative, got {cash}")
        with self._connect() as db:
            db.execute(
                "INSERT OR IGNORE INTO portfolio_accounts (name, starting_cash, created_at)"
                " VALUES (?, ?, ?)",
                (name, cash, _now()),
            )

    def reset(self, name: str = DEFAULT_ACCOUNT, cash: float = DEFAULT_CASH) -> None:
        """Forget the account's orders and start again with ``cash``."""
        if cash < 0:
            raise OrderRejected(f"starting cash must not be negative, got {cash}")
        with self._connect(immediate=True) as db:
            db.execute("DELETE FROM portfolio_orders WHERE account = ?", (name,))
            db.execute(
                "INSERT OR REPLACE INTO portfolio_accounts (name, starting_cash, created_at)"
                " VALUES (?, ?, ?)",
                (name, cash, _now()),
            )

    def starting_cash(self, name: str = DEFAULT_ACCOUNT) -> float:
        with self._connect() as db:
            row = db.execute(
                "SELECT starting_cash FROM portfolio_accounts WHERE name = ?", (name,)
            ).fetchone()
        if row is None:
            return DEFAULT_CASH
        return float(row[0])

    # -- orders -----------------------------------------------------------------------------

    def place(self, order: OrderRequest, account: str = DEFAULT_ACCOUNT) -> Order:
        """Check and record ``order``; raises OrderRejected saying why it cannot be filled."""
        self.open_account(account)
        placed_at = datetime.now(UTC)
        with self._connect(immediate=True) as db:
            cash, orders = self._read(db, account)
            _check(replay_orders(cash, orders), order)
            cursor = db.execute(
                "INSERT INTO portfolio_orders (account, placed_at, as_of, body) VALUES (?,?,?,?)",
                (
                    account,
                    placed_at.isoformat(),
                    order.as_of.isoformat() if order.as_of else None,
                    order.model_dump_json(),
                ),
            )
            order_id = int(cursor.lastrowid or 0)
        return Order(**order.model_dump(), id=order_id, account=account, placed_at=placed_at)

    def orders(self, account: str = DEFAULT_ACCOUNT) -> list[Order]:
        """The account's orders, oldest first."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT id, placed_at, body FROM portfolio_orders WHERE account = ? ORDER BY id",
                (account,),
            ).fetchall()
        return [_order(account, *row) for row in rows]

    def positions(self, account: str = DEFAULT_ACCOUNT) -> tuple[float, list[Position]]:
        """Cash and the open positions (flat ones dropped), from the order log."""
        book = replay_orders(self.starting_cash(account), self.orders(account))
        return book.cash, [p for p in book.positions.values() if p.quantity]

    def value(self, marks: Mapping[str, float | None], account: str = DEFAULT_ACCOUNT) -> Valuation:
        """The account at ``marks`` (per-share prices by contract key). A position without
        a mark is held at cost and listed in ``unpriced``."""
        orders = self.orders(account)
        starting = self.starting_cash(account)
        return valuation(account, starting, replay_orders(starting, orders), marks, len(orders))

    def _read(self, db: sqlite3.Connection, account: str) -> tuple[float, list[Order]]:
        row = db.execute(
            "SELECT starting_cash FROM portfolio_accounts WHERE name = ?", (account,)
        ).fetchone()
        rows = db.execute(
            "SELECT id, placed_at, body FROM portfolio_orders WHERE account = ? ORDER BY id",
            (account,),
        ).fetchall()
        return float(row[0]), [_order(account, *r) for r in rows]


def valuation(
    account: str,
    starting_cash: float,
    book: _Book,
    marks: Mapping[str, float | None],
    orders: int,
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
        positions=rows,
        market_value=market_value,
        realized_pnl=book.realized,
        unrealized_pnl=sum(r.unrealized_pnl for r in rows),
        account_value=account_value,
        total_pnl=account_value - starting_cash,
        unpriced=unpriced,
        orders=orders,
    )


def _order(account: str, order_id: int, placed_at: str, body: str) -> Order:
    request = OrderRequest.model_validate_json(body)
    return Order(
        **request.model_dump(),
        id=order_id,
        account=account,
        placed_at=datetime.fromisoformat(placed_at),
    )


def _now() -> str:
    return datetime.now(UTC).isoformat()

"""The paper portfolio: accounts and their orders in SQLite; cash, positions and P&L from them.

Orders are the only thing written: cash, positions, average cost and realised P&L are
replayed from an account's orders in trade-date order (:mod:`alphadesk.portfolio.book`), so
they can never drift from the order log, and a valuation at an instant sees only the
orders traded up to it. Each order is checked against the whole timeline (at its own
trade date and at every later order's) and inserted in one ``BEGIN IMMEDIATE``
transaction, so concurrent orders from several threads or processes are serialised: none
is lost and none spends cash, or collateral, another already spent.

Accounts are opened explicitly; only the default account opens itself on first use.

A stored order an older version accepted but that is impossible (an option sold after it
expired, an amount that is not finite) or that no longer reads is set aside: it changes
nothing, and every valuation names it, so one bad row never breaks the account.
"""

from __future__ import annotations

import bisect
import math
import re
import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from alphadesk.money import usd
from alphadesk.portfolio.book import (
    Book,
    expiration_problem,
    expired_problem,
    first_new_problem,
    replay_orders,
    valuation,
)
from alphadesk.portfolio.models import (
    ACCOUNT_PATTERN,
    MAX_CASH,
    Account,
    AccountExists,
    AccountNotFound,
    DamagedAccount,
    DividendCredit,
    Order,
    OrderRejected,
    OrderRequest,
    Position,
    SetAside,
    Valuation,
)
from alphadesk.store import sqlite

__all__ = ["DEFAULT_ACCOUNT", "DEFAULT_CASH", "OrderLog", "PaperPortfolio"]

DEFAULT_ACCOUNT = "paper"
DEFAULT_CASH = 100_000.0

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

# Columns added since the first schema. An older row's trade date (trade_at, UTC text so
# it sorts as time) is its fill instant, else when it was placed; forced is 0.
_ADDED_COLUMNS = {
    "trade_at": "TEXT",
    "forced": "INTEGER NOT NULL DEFAULT 0",
}


def _utc(instant: datetime) -> str:
    return instant.astimezone(UTC).isoformat()


def _migrate(db: sqlite3.Connection) -> None:
    """Bring an older order table up to date in place; no order is lost or changed."""
    have = {row[1] for row in db.execute("PRAGMA table_info(portfolio_orders)")}
    for name, kind in _ADDED_COLUMNS.items():
        if name not in have:
            db.execute(f"ALTER TABLE portfolio_orders ADD COLUMN {name} {kind}")
    rows = db.execute(
        "SELECT id, placed_at, as_of FROM portfolio_orders WHERE trade_at IS NULL"
    ).fetchall()
    for order_id, placed_at, as_of in rows:
        traded = datetime.fromisoformat(as_of or placed_at)
        db.execute(
            "UPDATE portfolio_orders SET trade_at = ? WHERE id = ?", (_utc(traded), order_id)
        )


def _needs_migration(db: sqlite3.Connection) -> bool:
    have = {row[1] for row in db.execute("PRAGMA table_info(portfolio_orders)")}
    if not set(_ADDED_COLUMNS) <= have:
        return True
    return (
        db.execute("SELECT 1 FROM portfolio_orders WHERE trade_at IS NULL").fetchone() is not None
    )


def _order(
    account: str, order_id: int, placed_at: str, trade_at: str, forced: int, body: str
) -> Order | SetAside:
    """A stored row as an order, or set aside with the reason it cannot count."""
    try:
        request = OrderRequest.model_validate_json(body)
        order = Order(
            **request.model_dump(exclude={"as_of", "forced"}),
            id=order_id,
            account=account,
            as_of=datetime.fromisoformat(trade_at),
            forced=bool(forced),
            placed_at=datetime.fromisoformat(placed_at),
        )
    except (ValidationError, ValueError) as exc:
        first = exc.errors()[0] if isinstance(exc, ValidationError) else None
        why = f"{'.'.join(map(str, first['loc']))}: {first['msg']}" if first else str(exc)
        return SetAside(id=order_id, reason=f"it does not read as an order ({why})")
    expired = expired_problem(order)
    return order if expired is None else SetAside(id=order_id, reason=expired)


def _trade_order(order: Order) -> tuple[datetime, int]:
    return order.as_of, order.id


@dataclass(frozen=True)
class OrderLog:
    """An account as read at once: its starting cash, its orders in trade-date order and
    the stored rows set aside. Everything else is replayed from it."""

    account: str
    starting_cash: float
    orders: list[Order]
    set_aside: list[SetAside]

    def until(self, as_of: datetime | None) -> list[Order]:
        """The orders traded at or before ``as_of`` (None: every order)."""
        return self.orders if as_of is None else [o for o in self.orders if o.as_of <= as_of]

    def book(self, as_of: datetime | None = None, dividends: Sequence[DividendCredit] = ()) -> Book:
        """The replayed book at ``as_of`` (default: every order), with the ``dividends``
        whose ex-date opened by then (default: by now) credited to the shares held."""
        until = as_of or datetime.now(UTC)
        credited = [d for d in dividends if d.as_of <= until]
        return replay_orders(self.starting_cash, self.until(as_of), credited)

    def value(
        self,
        marks: Mapping[str, float | None],
        as_of: datetime | None = None,
        dividends: Sequence[DividendCredit] = (),
    ) -> Valuation:
        """The account at ``as_of`` and ``marks`` (per-share prices by contract key); a
        position without a mark is held at cost and listed in ``unpriced``; the rows set
        aside are listed in ``set_aside``; ``dividends`` as in :meth:`book`."""
        book = self.book(as_of, dividends)
        orders = len(self.until(as_of))
        found = valuation(self.account, self.starting_cash, book, marks, orders, as_of)
        return found.model_copy(update={"set_aside": self.set_aside})


# COALESCE: a row an older alphadesk wrote since the migration is dated as _migrate dates it.
_ORDER_COLUMNS = "id, placed_at, COALESCE(trade_at, as_of, placed_at), forced, body"


class PaperPortfolio:
    """Paper accounts in one SQLite file, safe to share between threads and processes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        sqlite.create(path, _SCHEMA)
        with self._connect() as db:
            stale = _needs_migration(db)
        if stale:
            with self._connect(immediate=True) as db:  # serialised: one process migrates
                _migrate(db)

    def _connect(self, *, immediate: bool = False) -> AbstractContextManager[sqlite3.Connection]:
        return sqlite.transaction(self.path, immediate=immediate)

    # -- accounts ---------------------------------------------------------------------------

    def open_account(self, name: str, cash: float = DEFAULT_CASH) -> Account:
        """Open a new account with ``cash``.

        Raises:
            AccountExists: the name is taken.
            ValueError: a name other than 1-40 letters, digits, - and _; negative cash.
        """
        if not re.fullmatch(ACCOUNT_PATTERN, name):
            raise ValueError(f"{name!r} is not an account name: use 1-40 letters, digits, - or _")
        _check_cash(cash)
        created = datetime.now(UTC)
        with self._connect(immediate=True) as db:
            row = _account_row(db, name)
            if row is not None:
                raise AccountExists(
                    f"account {name!r} is already open (starting cash {usd(row[0])}); reset "
                    "it to start again"
                )
            _insert_account(db, name, cash, created)
        return Account(name=name, starting_cash=cash, created_at=created)

    def accounts(self) -> list[Account]:
        """Every account, by name (the default one once it was first used)."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT name, starting_cash, created_at FROM portfolio_accounts ORDER BY name"
            ).fetchall()
        return [
            Account(
                name=n,
                starting_cash=None if _damage(n, c) else c,
                created_at=datetime.fromisoformat(t),
                damaged=_damage(n, c),
            )
            for n, c, t in rows
        ]

    def account(self, name: str = DEFAULT_ACCOUNT) -> Account:
        """The account ``name``; the default one is opened on first use.

        Raises:
            AccountNotFound: no such account (the message lists the open ones).
        """
        with self._connect(immediate=name == DEFAULT_ACCOUNT) as db:
            cash = _starting_cash(db, name, open_default=True)
            row = _account_row(db, name)
        assert row is not None
        return Account(name=name, starting_cash=cash, created_at=datetime.fromisoformat(row[1]))

    def reset(self, name: str = DEFAULT_ACCOUNT, cash: float = DEFAULT_CASH) -> None:
        """Forget the account's orders and start again with ``cash``.

        Raises:
            AccountNotFound: no such account.
            ValueError: cash that is not an amount from 0 to $1,000,000,000,000.
        """
        _check_cash(cash)
        with self._connect(immediate=True) as db:
            _starting_cash(db, name, open_default=True)
            db.execute("DELETE FROM portfolio_orders WHERE account = ?", (name,))
            db.execute(
                "UPDATE portfolio_accounts SET starting_cash = ?, created_at = ? WHERE name = ?",
                (cash, _utc(datetime.now(UTC)), name),
            )

    def starting_cash(self, name: str = DEFAULT_ACCOUNT) -> float:
        """The account's starting cash.

        Raises:
            AccountNotFound: no such account.
            DamagedAccount: its stored starting cash is not an amount.
        """
        return self.log(name).starting_cash

    # -- orders -----------------------------------------------------------------------------

    def place(
        self,
        order: OrderRequest,
        account: str = DEFAULT_ACCOUNT,
        dividends: Sequence[DividendCredit] = (),
    ) -> Order:
        """Check and record ``order`` at its trade date (``as_of``; default: now), the cash of
        ``dividends`` counted from their ex-dates (:func:`alphadesk.portfolio.placing.place`
        gathers them from the data).

        Raises:
            AccountNotFound: no such account.
            InsufficientCash: not enough free cash at its date (collateral counted).
            OrderRejected: a price of 0, an option whose expiration is not a trading day
                on or after the trade date, a sale of shares not held at its date, or an
                order that would break a later one.
            DamagedAccount: the account's stored starting cash is not an amount.
        """
        if order.price <= 0:
            raise OrderRejected(f"a price must be above 0, got {order.price:g}")
        placed_at = datetime.now(UTC)
        order = order.model_copy(update={"as_of": order.as_of or placed_at})
        assert order.as_of is not None
        impossible = expiration_problem(order)
        if impossible is not None:
            raise OrderRejected(impossible)
        with self._connect(immediate=True) as db:
            log = self._read(db, account, open_default=True)
            starting, timeline = log.starting_cash, log.orders
            at = bisect.bisect_right([o.as_of for o in timeline], order.as_of)
            problem = first_new_problem(starting, timeline, order, at, dividends)
            if problem is not None:
                raise problem
            cursor = db.execute(
                "INSERT INTO portfolio_orders (account, placed_at, as_of, trade_at, forced, body)"
                " VALUES (?,?,?,?,?,?)",
                (account, placed_at.isoformat(), order.as_of.isoformat(), _utc(order.as_of),
                 int(order.forced), order.model_dump_json()),
            )  # fmt: skip
            order_id = int(cursor.lastrowid or 0)
        return Order(**order.model_dump(), id=order_id, account=account, placed_at=placed_at)

    def orders(self, account: str = DEFAULT_ACCOUNT, as_of: datetime | None = None) -> list[Order]:
        """The account's orders in trade-date order (then as placed); with ``as_of``, only
        those traded at or before it. Rows set aside are not among them."""
        return self.log(account).until(as_of)

    def set_aside(self, account: str = DEFAULT_ACCOUNT) -> list[SetAside]:
        """The stored rows the account leaves out, and why."""
        return self.log(account).set_aside

    def positions(
        self, account: str = DEFAULT_ACCOUNT, as_of: datetime | None = None
    ) -> tuple[float, list[Position]]:
        """Cash and the open positions (flat ones dropped) at ``as_of`` (default: every order)."""
        book = self.book(account, as_of)
        return book.cash, [p for p in book.positions.values() if p.quantity]

    def book(self, account: str = DEFAULT_ACCOUNT, as_of: datetime | None = None) -> Book:
        """The replayed book at ``as_of`` (default: every order)."""
        return self.log(account).book(as_of)

    def value(
        self,
        marks: Mapping[str, float | None],
        account: str = DEFAULT_ACCOUNT,
        as_of: datetime | None = None,
    ) -> Valuation:
        """The account at ``as_of`` (only the orders traded by then) and ``marks``
        (per-share prices by contract key). A position without a mark is held at cost and
        listed in ``unpriced``; stored rows left out are listed in ``set_aside``."""
        return self.log(account).value(marks, as_of)

    def log(self, account: str = DEFAULT_ACCOUNT) -> OrderLog:
        """The account read in one transaction, to replay and value consistently.

        Raises:
            AccountNotFound: no such account.
            DamagedAccount: its stored starting cash is not an amount.
        """
        with self._connect() as db:
            return self._read(db, account)

    def _read(
        self, db: sqlite3.Connection, account: str, *, open_default: bool = False
    ) -> OrderLog:
        starting = _starting_cash(db, account, open_default=open_default)
        damage = _damage(account, starting)
        if damage is not None:
            raise DamagedAccount(damage)
        rows = db.execute(
            f"SELECT {_ORDER_COLUMNS} FROM portfolio_orders WHERE account = ?", (account,)
        ).fetchall()
        read = [_order(account, *r) for r in rows]
        orders = sorted((o for o in read if isinstance(o, Order)), key=_trade_order)
        return OrderLog(account, starting, orders, [o for o in read if isinstance(o, SetAside)])


def _check_cash(cash: float) -> None:
    if not (math.isfinite(cash) and 0 <= cash <= MAX_CASH):  # also NaN
        raise ValueError(f"starting cash must be an amount from $0 to {usd(MAX_CASH)}, got {cash}")


def _account_row(db: sqlite3.Connection, name: str) -> tuple[float, str] | None:
    row = db.execute(
        "SELECT starting_cash, created_at FROM portfolio_accounts WHERE name = ?", (name,)
    ).fetchone()
    return None if row is None else (float(row[0]), str(row[1]))


def _insert_account(db: sqlite3.Connection, name: str, cash: float, created: datetime) -> None:
    db.execute(
        "INSERT INTO portfolio_accounts (name, starting_cash, created_at) VALUES (?, ?, ?)",
        (name, cash, _utc(created)),
    )


def _damage(account: str, starting: float) -> str | None:
    """What is wrong with a stored starting cash that is not an amount, with the repair."""
    if math.isfinite(starting) and 0 <= starting <= MAX_CASH:
        return None
    return (
        f"account {account!r} has a stored starting cash of {starting}, which is not "
        f"an amount from $0 to {usd(MAX_CASH)}: reset it to repair it "
        f"(alphadesk portfolio reset --account {account} --cash C)"
    )


def _starting_cash(db: sqlite3.Connection, name: str, *, open_default: bool = False) -> float:
    """The account's starting cash. The default account opens itself on first use
    (``open_default``, in a write transaction); until then it reads as fresh."""
    row = _account_row(db, name)
    if row is not None:
        return row[0]
    if name == DEFAULT_ACCOUNT:
        if open_default:
            _insert_account(db, name, DEFAULT_CASH, datetime.now(UTC))
        return DEFAULT_CASH
    names = [r[0] for r in db.execute("SELECT name FROM portfolio_accounts ORDER BY name")]
    raise AccountNotFound(name, names)

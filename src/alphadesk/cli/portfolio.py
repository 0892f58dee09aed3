"""``alphadesk portfolio``: show and edit the paper portfolio."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

import typer

from alphadesk.cli.common import console, err_console, fail, parse_as_of, settings_from
from alphadesk.money import usd

if TYPE_CHECKING:
    from rich.table import Table

    from alphadesk.portfolio import DividendPaid, Order, OrderLog, OrderRequest, PaperPortfolio

__all__ = ["portfolio_app"]

portfolio_app = typer.Typer(
    help="The paper portfolio: cash, positions, P&L; orders by hand or from a desk's decision.",
    invoke_without_command=True,
)

_ACCOUNT = typer.Option("paper", "--account", help="The paper account (alphadesk portfolio open).")
_AS_OF = typer.Option(
    None, "--as-of", metavar="DATE", help="Value at this date's close (YYYY-MM-DD). Default: now."
)
_TRADE_DATE = typer.Option(
    None,
    "--date",
    "--as-of",
    metavar="DATE",
    help="The trade date: fill at this date's close (YYYY-MM-DD). Default: now.",
)
_FORCE = typer.Option(
    False,
    "--force",
    help="Place it even when the price is off the day's low-high range or the symbol has no "
    "data that day (the order is labelled forced).",
)


def _book(ctx: typer.Context) -> PaperPortfolio:
    from alphadesk.portfolio import PaperPortfolio

    return PaperPortfolio(settings_from(ctx).store_path)


@contextmanager
def _refusals() -> Iterator[None]:
    """The portfolio's refusals as a clear message and exit 1."""
    from alphadesk.portfolio import (
        AccountExists,
        AccountNotFound,
        OrderRejected,
        PriceNotVerified,
    )

    try:
        yield
    except AccountNotFound as exc:
        raise fail(
            str(exc), f"open it with `alphadesk portfolio open {exc.name} --cash C`"
        ) from None
    except PriceNotVerified as exc:
        raise fail(
            str(exc), "check the price and --date, or add --force to place it anyway"
        ) from None
    except (OrderRejected, AccountExists, ValueError) as exc:
        raise fail(str(exc)) from None


@portfolio_app.callback()
def show(
    ctx: typer.Context,
    as_of: str | None = _AS_OF,
    account: str = _ACCOUNT,
    as_json: bool = typer.Option(False, "--json", help="Print the valuation as JSON."),
) -> None:
    """Cash, positions marked at an instant, P&L and account value; only the orders traded
    by that instant count."""
    if ctx.invoked_subcommand is not None:
        return
    from rich.table import Table

    from alphadesk.data import build_provider
    from alphadesk.portfolio import account_report

    settings = settings_from(ctx)
    with _refusals():
        book = _book(ctx)
        book.account(account)  # an unknown account fails here, before any data is read
        report = account_report(book, build_provider(settings), parse_as_of(as_of), account)
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
        return
    title = f"paper account {account} as of {report.as_of:%Y-%m-%d %H:%M %Z}"
    table = Table("position", "qty", "avg cost", "mark", "value", "unrealised", "realised",
                  title=title)  # fmt: skip
    for p in report.positions:
        mark = "-" if p.mark is None else f"{p.mark:,.2f}"
        table.add_row(p.position, f"{p.quantity:g}", f"{p.average_cost:,.2f}", mark,
                      usd(p.market_value), usd(p.unrealized_pnl), usd(p.realized_pnl))  # fmt: skip
    console.print(table)
    reserved = f" ({usd(report.collateral)} reserved for short puts)" if report.collateral else ""
    console.print(
        f"cash {usd(report.cash)}{reserved} · positions {usd(report.market_value)} · "
        f"account value {usd(report.account_value)} · "
        f"P&L {usd(report.total_pnl)} ({report.total_pnl_pct}%) · {report.orders} orders",
        highlight=False,
    )
    if report.dividends:
        console.print(_dividends_table(report.dividends))
    for note in report.missing:
        err_console.print(f"[yellow]{note}[/]")


def _place(ctx: typer.Context, order: OrderRequest, account: str, force: bool) -> None:
    from alphadesk.data import build_provider
    from alphadesk.portfolio.placing import place

    with _refusals():
        placed = place(_book(ctx), build_provider(settings_from(ctx)), order, account, force=force)
    _said_placed(placed)


def _said_placed(placed: Order) -> None:
    forced = " [FORCED]" if placed.forced else ""
    console.print(
        f"order {placed.id}: {placed.side} {placed.quantity:g} {placed.contract.key} at "
        f"{placed.price:g} on {placed.as_of:%Y-%m-%d} ({placed.source}){forced}",
        highlight=False,
    )
    err_console.print(f"[dim]price check: {placed.price_check}[/]", highlight=False)


def _order(
    ctx: typer.Context,
    side: str,
    symbol: str,
    quantity: float,
    price: float | None,
    right: str | None,
    strike: float | None,
    expiration: str | None,
    trade_date: str | None,
) -> OrderRequest:
    from pydantic import ValidationError

    from alphadesk.data import build_provider
    from alphadesk.data.errors import DataError
    from alphadesk.data.symbols import normalize_symbol
    from alphadesk.portfolio import Contract, OrderRequest

    instant = parse_as_of(trade_date)
    try:
        contract = Contract(
            symbol=normalize_symbol(symbol),
            right=right,
            strike=strike,
            expiration=date.fromisoformat(expiration) if expiration else None,
        )
    except ValueError as exc:
        hint = "an option needs --put or --call, --strike and --expiration"
        raise fail(_said(exc), hint) from None
    if price is None:
        if contract.is_option:
            raise fail("an option order needs --price (per share)")
        try:
            price = build_provider(settings_from(ctx)).quote(contract.symbol, instant).price
        except DataError as exc:
            raise fail(str(exc), "give a --date the data covers (alphadesk data list)") from None
    if not price > 0:
        raise fail(f"a price must be above 0, got {price:g}")
    try:
        return OrderRequest(contract=contract, side=side, quantity=quantity, price=price,
                            as_of=instant, source="manual")  # fmt: skip
    except ValidationError as exc:
        raise fail(_said(exc)) from None


def _said(exc: ValueError) -> str:
    """A refusal in the model's own words: ``quantity: Input should be a finite number``."""
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError):
        return str(exc)
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def _trade(side: str) -> Callable[..., None]:
    def command(
        ctx: typer.Context,
        symbol: str = typer.Argument(..., metavar="SYMBOL", help="Ticker, e.g. AAPL."),
        quantity: float = typer.Argument(
            ..., metavar="QUANTITY", help="Shares, or option contracts."
        ),
        price: float | None = typer.Option(
            None, help="Per share. Default: the close at --date. Checked against that day."
        ),
        put: bool = typer.Option(False, "--put", help="A put option."),
        call: bool = typer.Option(False, "--call", help="A call option."),
        strike: float | None = typer.Option(None, help="Option strike."),
        expiration: str | None = typer.Option(
            None, metavar="DATE", help="Option expiration (YYYY-MM-DD)."
        ),
        trade_date: str | None = _TRADE_DATE,
        force: bool = _FORCE,
        account: str = _ACCOUNT,
    ) -> None:
        if not quantity > 0:
            raise fail(f"the quantity must be above 0, got {quantity:g}")
        right = "put" if put else "call" if call else None
        order = _order(ctx, side, symbol, quantity, price, right, strike, expiration, trade_date)
        _place(ctx, order, account, force)

    command.__doc__ = (
        f"{side.capitalize()} shares or option contracts (paper) on a trade date; a short put "
        "needs its strike x 100 in free cash."
    )
    return command


portfolio_app.command("buy")(_trade("buy"))
portfolio_app.command("sell")(_trade("sell"))


@portfolio_app.command("follow")
def follow(
    ctx: typer.Context,
    run_id: str = typer.Argument(
        ..., metavar="RUN_ID", help="A recorded run (alphadesk runs list)."
    ),
    contracts: int | None = typer.Option(
        None,
        "--quantity",
        "--contracts",
        min=1,
        help="Contracts for a CSP run, shares for a trading-desk run (default 1); a fund "
        "run's orders carry their own.",
    ),
    force: bool = _FORCE,
    account: str = _ACCOUNT,
) -> None:
    """Place the orders a recorded decision stands for, dated the run's as-of: a CSP run
    sells its put (strike x 100 per contract must be free cash), a trading-desk run buys or
    sells the stock at the judge's entry, a fund run places every order of its rebalance
    (once)."""
    from alphadesk.data import build_provider
    from alphadesk.pipelines.follow import follow_run
    from alphadesk.store import RunNotFound, RunStore

    settings = settings_from(ctx)
    with _refusals():
        try:
            store, market = RunStore(settings.store_path), build_provider(settings)
            placed = follow_run(store, _book(ctx), market, run_id, account=account,
                                quantity=contracts, force=force)  # fmt: skip
        except RunNotFound as exc:
            raise fail(str(exc)) from None
    for order in placed:
        _said_placed(order)


def _dividends_table(paid: list[DividendPaid]) -> Table:
    from rich.table import Table

    table = Table("symbol", "ex-date", "shares", "per share", "cash", title="dividends credited")
    for d in paid:
        table.add_row(d.symbol, f"{d.ex_date}", f"{d.shares:g}", f"{d.amount:g}", usd(d.cash))
    return table


def _when(instant: datetime) -> str:
    return f"{instant.astimezone():%Y-%m-%d %H:%M}"


@portfolio_app.command("orders")
def orders(
    ctx: typer.Context,
    account: str = _ACCOUNT,
    as_json: bool = typer.Option(False, "--json", help="One JSON object per order."),
) -> None:
    """Every order of the account by trade date; forced orders (price not verified) are
    marked, and when each was recorded is shown last. The dividends credited so far follow."""
    from rich.table import Table

    with _refusals():
        log = _book(ctx).log(account)
        listed = log.orders
        for row in log.set_aside:
            err_console.print(f"[yellow]{row.describe()}[/]", highlight=False)
    if as_json:
        for o in listed:
            typer.echo(o.model_dump_json())
        return
    fees = any(o.fees for o in listed)
    # One space between columns, so the ids, dates and contracts fit 80 columns uncut; only
    # the source folds.
    table = Table(box=None, padding=(0, 1, 0, 0), pad_edge=False, header_style="bold underline")
    for name in ("traded", "id", "side", "qty", "contract", "price"):
        table.add_column(name, no_wrap=True)
    if fees:
        table.add_column("fees", no_wrap=True)
    table.add_column("check", no_wrap=True)  # verified, FORCED, or - (placed before checks)
    table.add_column("recorded", no_wrap=True)
    table.add_column("source", overflow="fold", min_width=8)
    for o in listed:
        check = "FORCED" if o.forced else "ok" if o.price_check else "-"
        cells = [f"{o.as_of:%Y-%m-%d}", str(o.id), o.side, f"{o.quantity:g}", o.contract.key,
                 f"{o.price:g}", *([usd(o.fees)] if fees else []), check,
                 _when(o.placed_at), o.source]  # fmt: skip
        table.add_row(*cells)
    console.print(table)
    _print_dividends(ctx, log)


def _print_dividends(ctx: typer.Context, log: OrderLog) -> None:
    """The dividends the account's stocks paid by now, and the stocks without records."""
    from alphadesk.data import build_provider
    from alphadesk.portfolio import account_dividends

    now = datetime.now(UTC)
    credits, basis = account_dividends(log, build_provider(settings_from(ctx)), now)
    paid = log.book(now, credits).dividends
    if paid:
        console.print(_dividends_table(paid))
    for note in basis:
        if note.startswith("no dividend records"):
            err_console.print(f"[yellow]{note}[/]", highlight=False)


@portfolio_app.command("open")
def open_account(
    ctx: typer.Context,
    name: str = typer.Argument(..., metavar="NAME", help="Letters, digits, - and _."),
    cash: float = typer.Option(100_000.0, min=0, help="Starting cash."),
) -> None:
    """Open a new paper account with CASH (the default account, paper, opens itself)."""
    with _refusals():
        opened = _book(ctx).open_account(name, cash)
    console.print(f"account {opened.name} opened with {usd(cash)}", highlight=False)


@portfolio_app.command("accounts")
def accounts(ctx: typer.Context) -> None:
    """The paper accounts and their starting cash."""
    from rich.table import Table

    table = Table("account", "starting cash", "opened")
    found = _book(ctx).accounts()
    for a in found:
        cash = "damaged" if a.starting_cash is None else usd(a.starting_cash)
        table.add_row(a.name, cash, _when(a.created_at))
    console.print(table)
    for a in found:
        if a.damaged:
            console.print(a.damaged, highlight=False)


@portfolio_app.command("reset")
def reset(
    ctx: typer.Context,
    cash: float = typer.Option(100_000.0, min=0, help="Starting cash."),
    account: str = _ACCOUNT,
    yes: bool = typer.Option(False, "--yes", help="Do not ask for confirmation."),
) -> None:
    """Forget the account's orders and start again with CASH."""
    with _refusals():
        book = _book(ctx)
        book.account(account)
        if not yes and not typer.confirm(f"forget every order of {account}?"):
            raise typer.Exit(1)
        book.reset(account, cash)
    console.print(f"account {account} reset with {usd(cash)}", highlight=False)

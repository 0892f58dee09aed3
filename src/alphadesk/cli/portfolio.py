"""``alphadesk portfolio``: show and edit the paper portfolio."""

from __future__ import annotations

import asyncio
from datetime import date, datetime
from typing import Any

import typer

from alphadesk.cli.common import console, err_console, fail, parse_as_of, settings_from

__all__ = ["portfolio_app"]

portfolio_app = typer.Typer(
    help="The paper portfolio: cash, positions, P&L; orders by hand or from a desk's decision.",
    invoke_without_command=True,
)

_ACCOUNT = typer.Option("paper", "--account", help="The paper account.")
_AS_OF = typer.Option(
    None,
    "--as-of",
    metavar="DATE",
    help="Value (or fill) at this date's close (YYYY-MM-DD). Default: now.",
)


def _instant(value: str | None) -> datetime:
    return parse_as_of(value)


@portfolio_app.callback()
def show(
    ctx: typer.Context,
    as_of: str | None = _AS_OF,
    account: str = _ACCOUNT,
    as_json: bool = typer.Option(False, "--json", help="Print the valuation as JSON."),
) -> None:
    """Cash, positions marked at an instant, P&L and account value."""
    if ctx.invoked_subcommand is not None:
        return
    from rich.table import Table

    from alphadesk.data import build_provider
    from alphadesk.pipelines.assistant.orders import value_portfolio

    settings = settings_from(ctx)
    report = asyncio.run(
        value_portfolio(settings, build_provider(settings), _instant(as_of), account)
    )
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
        return
    title = f"paper account {account} as of {report.as_of:%Y-%m-%d %H:%M %Z}"
    table = Table("position", "qty", "avg cost", "mark", "value", "unrealised", "realised",
                  title=title)  # fmt: skip
    for p in report.positions:
        mark = "-" if p.mark is None else f"{p.mark:,.2f}"
        table.add_row(p.position, f"{p.quantity:g}", f"{p.average_cost:,.2f}", mark,
                      f"{p.market_value:,.2f}", f"{p.unrealized_pnl:,.2f}",
                      f"{p.realized_pnl:,.2f}")  # fmt: skip
    console.print(table)
    console.print(
        f"cash ${report.cash:,.2f} · positions ${report.market_value:,.2f} · account value "
        f"${report.account_value:,.2f} · P&L ${report.total_pnl:,.2f} ({report.total_pnl_pct}%)"
        f" · {report.orders} orders",
        highlight=False,
    )
    for note in report.missing:
        err_console.print(f"[yellow]{note}[/]")


def _place(ctx: typer.Context, order: Any, account: str) -> None:
    from alphadesk.store import OrderRejected, PaperPortfolio

    try:
        placed = PaperPortfolio(settings_from(ctx).store_path).place(order, account)
    except OrderRejected as exc:
        raise fail(str(exc)) from None
    console.print(
        f"order {placed.id}: {placed.side} {placed.quantity:g} {placed.contract.key} at "
        f"{placed.price:g} ({placed.source})",
        highlight=False,
    )


def _order(
    ctx: typer.Context,
    side: str,
    symbol: str,
    quantity: float,
    price: float | None,
    right: str | None,
    strike: float | None,
    expiration: str | None,
    as_of: str | None,
) -> Any:
    from alphadesk.data import build_provider
    from alphadesk.data.errors import DataError
    from alphadesk.data.symbols import normalize_symbol
    from alphadesk.store import Contract, OrderRequest

    instant = _instant(as_of)
    try:
        contract = Contract(
            symbol=normalize_symbol(symbol),
            right=right,
            strike=strike,
            expiration=date.fromisoformat(expiration) if expiration else None,
        )
    except ValueError as exc:
        raise fail(str(exc), "an option needs --put or --call, --strike and --expiration") from None
    if price is None:
        if contract.is_option:
            raise fail("an option order needs --price (per share)")
        try:
            price = build_provider(settings_from(ctx)).quote(contract.symbol, instant).price
        except DataError as exc:
            raise fail(str(exc), "give --price, or an --as-of the data covers") from None
    try:
        return OrderRequest(contract=contract, side=side, quantity=quantity, price=price,
                            as_of=instant, source="manual")  # fmt: skip
    except ValueError as exc:
        raise fail(str(exc)) from None


def _trade(side: str) -> Any:
    def command(
        ctx: typer.Context,
        symbol: str = typer.Argument(..., metavar="SYMBOL", help="Ticker, e.g. AAPL."),
        quantity: float = typer.Argument(
            ..., metavar="QUANTITY", help="Shares, or option contracts."
        ),
        price: float | None = typer.Option(None, help="Per share. Default: the close at --as-of."),
        put: bool = typer.Option(False, "--put", help="A put option."),
        call: bool = typer.Option(False, "--call", help="A call option."),
        strike: float | None = typer.Option(None, help="Option strike."),
        expiration: str | None = typer.Option(
            None, metavar="DATE", help="Option expiration (YYYY-MM-DD)."
        ),
        as_of: str | None = _AS_OF,
        account: str = _ACCOUNT,
    ) -> None:
        right = "put" if put else "call" if call else None
        order = _order(ctx, side, symbol, quantity, price, right, strike, expiration, as_of)
        _place(ctx, order, account)

    command.__doc__ = f"{side.capitalize()} shares or option contracts (paper)."
    return command


portfolio_app.command("buy")(_trade("buy"))
portfolio_app.command("sell")(_trade("sell"))


@portfolio_app.command("follow")
def follow(
    ctx: typer.Context,
    run_id: str = typer.Argument(..., metavar="RUN_ID", help="A desk run (alphadesk runs list)."),
    contracts: int = typer.Option(
        1,
        "--quantity",
        "--contracts",
        min=1,
        help="Contracts for a CSP run, shares for a trading-desk run.",
    ),
    account: str = _ACCOUNT,
) -> None:
    """Place the order a desk's recorded decision stands for: a CSP run sells its put, a
    trading-desk run buys or sells the stock at the judge's entry."""
    from alphadesk.pipelines.assistant.orders import order_from_run
    from alphadesk.store import RunNotFound, RunStore

    try:
        order = order_from_run(RunStore(settings_from(ctx).store_path), run_id, contracts)
    except (RunNotFound, ValueError) as exc:
        raise fail(str(exc)) from None
    _place(ctx, order, account)


@portfolio_app.command("orders")
def orders(ctx: typer.Context, account: str = _ACCOUNT) -> None:
    """Every order of the account, oldest first."""
    from rich.table import Table

    from alphadesk.store import PaperPortfolio

    table = Table("id", "placed", "side", "qty", "contract", "price", "fees", "source")
    for o in PaperPortfolio(settings_from(ctx).store_path).orders(account):
        table.add_row(str(o.id), f"{o.placed_at:%Y-%m-%d %H:%M}", o.side, f"{o.quantity:g}",
                      o.contract.key, f"{o.price:g}", f"{o.fees:g}", o.source)  # fmt: skip
    console.print(table)


@portfolio_app.command("reset")
def reset(
    ctx: typer.Context,
    cash: float = typer.Option(100_000.0, min=0, help="Starting cash."),
    account: str = _ACCOUNT,
    yes: bool = typer.Option(False, "--yes", help="Do not ask for confirmation."),
) -> None:
    """Forget the account's orders and start again with CASH."""
    from alphadesk.store import PaperPortfolio

    if not yes and not typer.confirm(f"forget every order of {account}?"):
        raise typer.Exit(1)
    PaperPortfolio(settings_from(ctx).store_path).reset(account, cash)
    console.print(f"account {account} reset with ${cash:,.2f}")

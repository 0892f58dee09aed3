"""``alphadesk data``: a quick look at the market data the agents see.

Heavy modules (pandas, the providers) are imported inside the commands so that
``alphadesk --help`` stays fast.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Literal

import typer

from alphadesk.cli.common import console, fail, settings_from
from alphadesk.cli.tables import Column, FitTable

if TYPE_CHECKING:
    from alphadesk.data import MarketData
    from alphadesk.data.models import Coverage

data_app = typer.Typer(
    help="Market data: what is bundled, and a quick look at bars, "
    "option chains and news as of an instant."
)

_AS_OF_HELP = (
    "Instant to look from: a date (its end, New York time) or an ISO datetime "
    "with a zone. Default: now."
)


def _as_of(value: str | None) -> datetime:
    """Parse --as-of: a date means the end of that day in New York."""
    from datetime import UTC, date, timedelta

    from alphadesk.data.calendar import end_of_day

    if value is None:
        return datetime.now(UTC)
    try:
        if len(value) == 10:
            return end_of_day(date.fromisoformat(value)) - timedelta(microseconds=1)
        instant = datetime.fromisoformat(value)
    except ValueError:
        raise fail(
            f"--as-of {value!r} is not a date or datetime",
            "use e.g. 2012-06-01 or 2012-06-01T15:30:00-04:00",
        ) from None
    if instant.tzinfo is None:
        raise fail(
            f"--as-of {value!r} has no time zone",
            "add an offset, e.g. 2012-06-01T15:30:00-04:00 or ...Z",
        )
    return instant


def _market(ctx: typer.Context) -> MarketData:
    from alphadesk.data import build_provider

    try:
        return build_provider(settings_from(ctx))
    except ValueError as exc:
        raise fail(str(exc), "fix data.providers in the settings") from None


def _fail_data(exc: Exception) -> typer.Exit:
    suggestions = getattr(exc, "suggestions", None)
    hint = f"did you mean {', '.join(suggestions)}?" if suggestions else None
    return fail(str(exc), hint)


def _provenance_line(provenance: object) -> str:
    from alphadesk.data import Provenance

    assert isinstance(provenance, Provenance)
    text = f"[dim]{provenance.provider} ({provenance.origin}) - {provenance.source}[/]"
    for attempt in provenance.attempts:
        text += f"\n[dim]  tried {attempt.provider}: {attempt.error}[/]"
    for note in provenance.notes:
        text += f"\n[dim]  note: {note}[/]"
    return text


@data_app.command("list")
def list_data(
    ctx: typer.Context,
    provider: str | None = typer.Option(
        None, metavar="NAME", help="Only this provider (e.g. bundled)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the list as JSON."),
) -> None:
    """List the symbols the configured providers hold: bars (fields, the runs of sessions
    present: a hole shows as two ranges), news (days, items) and the years of SEC
    fundamentals and earnings releases."""
    market = _market(ctx)
    rows = [c for c in market.coverage() if provider is None or c.provider == provider]
    if as_json:
        typer.echo(json.dumps([c.model_dump(mode="json") for c in rows], indent=2))
        return
    table = FitTable(
        "symbol",
        "provider",
        Column("ranges", text=True),
        Column("rows", right=True),
        Column("news", text=True),
        "fundamentals",
        "earnings",
        Column("name", text=True),
        Column("fields", text=True),
        Column("source", text=True),
    )
    for c in rows:
        table.add_row(
            c.symbol,
            c.provider,
            _ranges(c),
            str(c.rows or ""),
            c.news or "",
            c.fundamentals or "",
            c.earnings or "",
            c.name or "",
            ", ".join(c.fields),
            c.source,
        )
    console.print(table)
    if not rows:
        console.print(
            "[yellow]no provider can list its symbols[/] "
            "(bundled and local can; online providers cannot)"
        )


def _ranges(coverage: Coverage) -> str:
    """Each run of sessions with bars, so a hole is never hidden in one from..to."""
    runs = coverage.ranges or (
        [(coverage.start, coverage.end)] if coverage.start and coverage.end else []
    )
    return "\n".join(f"{a} to {b}" for a, b in runs)


@data_app.command("bars")
def bars(
    ctx: typer.Context,
    symbol: str = typer.Argument(..., metavar="SYMBOL", help="Ticker, e.g. AAPL or ^GSPC."),
    as_of: str | None = typer.Option(None, "--as-of", metavar="DATE", help=_AS_OF_HELP),
    last: int = typer.Option(10, "--last", "-n", min=1, help="How many of the latest bars."),
    interval: str = typer.Option("1d", help="1d, or an intraday interval such as 5m."),
) -> None:
    """Show the latest bars known at --as-of."""
    from alphadesk.data import DataError

    market = _market(ctx)
    when = _as_of(as_of)
    try:
        result = (
            market.daily_bars(symbol, when)
            if interval == "1d"
            else market.intraday_bars(symbol, when, interval=interval)
        )
    except (DataError, ValueError) as exc:
        raise _fail_data(exc) from None
    shown = [
        f
        for f in ("open", "high", "low", "close", "adj_close", "volume", "vwap")
        if f in result.fields
    ]
    table = FitTable(
        "close time",
        *(Column(f, right=True) for f in shown),
        title=f"{result.symbol} {result.interval} "
        f"({len(result)} bars known at {when.isoformat(timespec='minutes')})",
    )
    for stamp, row in result.frame.tail(last).iterrows():
        table.add_row(
            str(stamp), *(f"{row[f]:,.0f}" if f == "volume" else f"{row[f]:.4f}" for f in shown)
        )
    console.print(table)
    if result.missing:
        console.print(f"[dim]missing at the source: {', '.join(result.missing)}[/]")
    if result.basis:
        console.print(f"prices {result.basis}")
    console.print(_provenance_line(result.provenance))


@data_app.command("chain")
def chain(
    ctx: typer.Context,
    symbol: str = typer.Argument(..., metavar="SYMBOL", help="Underlying ticker."),
    as_of: str | None = typer.Option(None, "--as-of", metavar="DATE", help=_AS_OF_HELP),
    min_dte: int = typer.Option(0, "--min-dte", min=0, help="Fewest days to expiry."),
    max_dte: int = typer.Option(45, "--max-dte", min=0, help="Most days to expiry."),
    option_type: Literal["put", "call"] = typer.Option("put", "--type", help="Puts or calls."),
    expirations: int = typer.Option(1, "--expirations", min=1, help="How many to show."),
) -> None:
    """Show the option chain known at --as-of (observed when a source has it, else modeled)."""
    from alphadesk.data import DataError

    market = _market(ctx)
    when = _as_of(as_of)
    try:
        result = market.option_chain(symbol, when, min_dte=min_dte, max_dte=max_dte)
    except (DataError, ValueError) as exc:
        raise _fail_data(exc) from None
    console.print(
        f"[bold]{result.symbol}[/] at {result.underlying_price:.2f} "
        f"(observed {result.observed_at.isoformat(timespec='minutes')}), "
        f"rate {result.rate:.2%}, {result.provenance.origin}"
    )
    for expiration in result.expirations[:expirations]:
        rows = result.select(option_type, expiration)
        numbers = ("strike", "bid", "ask", "last", "iv", "delta", "theta", "oi", "volume")
        table = FitTable(
            *(Column(header, right=True) for header in numbers),
            title=f"{option_type}s {expiration} ({rows[0].dte} DTE)" if rows else "",
        )
        for c in rows:
            table.add_row(
                f"{c.strike:g}",
                _money(c.bid),
                _money(c.ask),
                _money(c.last),
                f"{c.iv:.1%}" if c.iv is not None else "-",
                _num(c.delta),
                _num(c.theta),
                str(c.open_interest or "-"),
                str(c.volume or "-"),
            )
        console.print(table)
    console.print(_provenance_line(result.provenance))


@data_app.command("news")
def news(
    ctx: typer.Context,
    symbol: str = typer.Argument(..., metavar="SYMBOL", help="Ticker."),
    as_of: str | None = typer.Option(None, "--as-of", metavar="DATE", help=_AS_OF_HELP),
    days: int = typer.Option(7, min=1, help="How many days back."),
) -> None:
    """Show the news published in the days before --as-of."""
    from alphadesk.data import DataError

    market = _market(ctx)
    when = _as_of(as_of)
    try:
        result = market.news(symbol, when, days=days)
    except (DataError, ValueError) as exc:
        raise _fail_data(exc) from None
    table = FitTable("published", Column("publisher", text=True), Column("title", text=True))
    for item in reversed(result.items):
        table.add_row(item.known_at.isoformat(timespec="minutes"), item.publisher or "", item.title)
    console.print(table)
    if not result.items:
        console.print(f"[yellow]no news in the {days} days before {when.date()}[/]")
    console.print(_provenance_line(result.provenance))


def _money(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"

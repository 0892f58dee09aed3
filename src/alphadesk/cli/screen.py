"""``alphadesk screen``: pre-filter a universe, run the desk on the survivors, rank them;
on one date or on every N-th session of a range."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Literal

import typer

from alphadesk.cli.common import (
    AS_OF_HELP,
    DELTA_HELP,
    DTE_HELP,
    MODEL_HELP,
    RESUME_HELP,
    ROC_HELP,
    Depth,
    check_models,
    console,
    err_console,
    fail,
    parse_as_of,
    parse_constraints,
    parse_day,
    ray_cluster,
    settings_from,
)
from alphadesk.cli.progress import CountingBar
from alphadesk.cli.tables import Column, FitTable

if TYPE_CHECKING:
    from alphadesk import ScreenHistory, ScreenRequest, Settings
    from alphadesk.data.base import MarketData
    from alphadesk.pipelines.csp.models import CspResult
    from alphadesk.pipelines.screen.prefilter import ScreenCheck, ScreenResult

__all__ = ["screen"]


def screen(
    ctx: typer.Context,
    symbols: list[str] | None = typer.Argument(
        None, metavar="SYMBOL", help="Symbols; default: the whole universe."
    ),
    strategy: Literal["csp"] = typer.Option("csp", help="The strategy to screen for."),
    index: str | None = typer.Option(
        None,
        "--universe",
        metavar="INDEX",
        help="Screen an index's members of each date (survivorship-free): sp500, nasdaq100 "
        "or dow30. Members without data here are counted and skipped.",
    ),
    as_of: str | None = typer.Option(None, "--as-of", metavar="DATE", help=AS_OF_HELP),
    start: str | None = typer.Option(
        None, "--from", metavar="DATE", help="First date of a screen over many dates."
    ),
    end: str | None = typer.Option(
        None, "--to", metavar="DATE", help="Last date of a screen over many dates."
    ),
    every: int = typer.Option(
        5, "--every", min=1, help="With --from/--to: screen every N-th trading session."
    ),
    model: str | None = typer.Option(None, "--model", "-m", metavar="MODEL", help=MODEL_HELP),
    depth: Depth = typer.Option("quick", help="Each agent's turn budget."),
    dte: str | None = typer.Option(None, "--dte", metavar="MIN-MAX", help=DTE_HELP),
    delta: str | None = typer.Option(None, "--delta", metavar="MIN-MAX", help=DELTA_HELP),
    min_roc: float | None = typer.Option(
        None, "--min-roc", metavar="PERCENT", min=0, help=ROC_HELP
    ),
    workers: int | None = typer.Option(
        None, "--workers", min=1, help="Processes to spread the screen over. Default: cores."
    ),
    concurrency: int = typer.Option(4, min=1, help="Desk runs in flight at once, in all."),
    ray: bool = typer.Option(
        False, "--ray", help="Spread the screen over a Ray cluster; a local one by default."
    ),
    ray_address: str | None = typer.Option(
        None,
        "--ray-address",
        metavar="ADDRESS",
        help="With --ray: the cluster to join, 'auto' or 'ray://HOST:10001'.",
    ),
    resume: str | None = typer.Option(
        None, "--resume", metavar="RUN_ID", help=f"{RESUME_HELP} The screen is the recorded one."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the screen as JSON."),
) -> None:
    """Screen a universe for cash-secured puts: cheap checks first, agents on the survivors."""
    import asyncio

    from alphadesk.data import build_provider
    from alphadesk.pipelines.screen.models import ScreenRequest
    from alphadesk.pipelines.screen.pipeline import run_screens
    from alphadesk.store import RunConflict

    del strategy  # csp is the only one today; the option names what is screened for
    cluster = ray_cluster(ray, ray_address)
    settings = settings_from(ctx)
    check_models(settings, model)
    market = build_provider(settings)
    if resume is not None:
        if symbols or index or as_of or start or end:
            raise fail("--resume continues the recorded screen", "give no SYMBOL nor dates")
        request = _recorded(settings, resume)
    else:
        dates, universe = _dates_and_symbols(market, symbols, index, as_of, start, end, every)
        request = ScreenRequest(
            universe=index,
            symbols=universe,
            dates=dates,
            depth=depth,
            model=model,
            constraints=parse_constraints(dte, delta, min_roc),
        )
    pairs = sum(len(request.symbols_on(day)) for day in request.dates)
    with _Progress(pairs) as progress:  # on stderr: --json stays pure
        try:
            history = asyncio.run(
                run_screens(
                    settings,
                    request,
                    market=market,
                    workers=workers,
                    concurrency=concurrency,
                    on_outcome=progress.record,
                    cluster=cluster,
                    resume_run_id=resume,
                )
            )
        except RunConflict as exc:  # resuming a finished run, or one another process runs
            raise fail(str(exc)) from None
    if as_json:
        typer.echo(history.model_dump_json(indent=2))
        return
    if len(history.screens) == 1:
        _print_one(history.screens[0])
    else:
        _print_history(history)
    err_console.print(
        f"[dim]saved as run {history.run_id}; every outcome in "
        f"{', '.join(str(p) for p in history.table)}[/]",
        soft_wrap=True,  # paths are copied: never broken across lines
    )


def _dates_and_symbols(
    market: MarketData,
    symbols: list[str] | None,
    index: str | None,
    as_of: str | None,
    start: str | None,
    end: str | None,
    every: int,
) -> tuple[list[datetime], list[str]]:
    """The dates to screen and the symbols, from the command's options."""
    from alphadesk.data.symbols import normalize_symbol
    from alphadesk.pipelines.screen.pipeline import rebalancing_dates

    if index is not None and symbols:
        raise fail("SYMBOLs and --universe exclude each other", "give one or the other")
    try:
        universe = [normalize_symbol(s) for s in symbols] if symbols else market.universe()
    except ValueError as exc:
        raise fail(str(exc)) from None
    if (start is None) != (end is None):
        raise fail("--from and --to go together", "give both, or --as-of for one date")
    if start is not None and end is not None:
        if as_of is not None:
            raise fail("--as-of and --from/--to exclude each other", "give one or the other")
        try:
            dates = rebalancing_dates(parse_day(start, "--from"), parse_day(end, "--to"), every)
        except ValueError as exc:
            raise fail(str(exc), "pick dates the exchange was open, --from before --to") from None
    else:
        dates = [parse_as_of(as_of, market=market, symbols=universe)]
    if index is not None:
        universe = _index_members(market, index, dates)
    return dates, universe


def _recorded(settings: Settings, run_id: str) -> ScreenRequest:
    """The request of the recorded screen ``run_id``."""
    from alphadesk.pipelines.screen.models import ScreenRequest
    from alphadesk.store import RunNotFound, RunStore

    try:
        run = RunStore(settings.store_path).get(run_id)
    except RunNotFound as exc:
        raise fail(str(exc), "see `alphadesk runs list --kind screen`") from None
    if run.kind != "screen":
        raise fail(f"run {run_id} is a {run.kind} run, not a screen", f"use `alphadesk {run.kind}`")
    return ScreenRequest.model_validate(run.request)


def _index_members(market: MarketData, index: str, dates: list[datetime]) -> list[str]:
    """The symbols with data among the index's members on any of ``dates``; says how many
    members lack data."""
    from zoneinfo import ZoneInfo

    from alphadesk.data.calendar import NEW_YORK
    from alphadesk.data.universe import INDICES, bundled_membership, with_data

    if index not in INDICES:
        raise fail(f"unknown index {index!r}", f"use one of {', '.join(INDICES)}")
    coverage, found = market.coverage(), set()
    lines = []
    for day in dates:
        session = day.astimezone(ZoneInfo(NEW_YORK)).date()
        members = bundled_membership().members(index, session)
        have, lack = with_data(members, coverage, session)
        found.update(have)
        example = f" (e.g. {', '.join(m.symbol for m in lack[:5])})" if lack else ""
        lines.append(
            f"{INDICES[index]} on {session}: {len(members)} members, {len(have)} with data "
            f"here, {len(lack)} without{example}"
        )
    for line in lines if len(lines) <= 5 else [lines[0], "...", lines[-1]]:
        err_console.print(f"[dim]{line}[/]")
    if not found:
        raise fail(
            f"no {INDICES[index]} member of those dates has data here",
            "see `alphadesk data list`; add the members' bars to the local data folder",
        )
    return sorted(found)


class _Progress(CountingBar):
    """A bar of symbol-dates screened, with how many were filtered out and selected (and
    how many failed with an error, if any did)."""

    def __init__(self, total: int) -> None:
        super().__init__("screening", total)
        self.filtered = self.selected = self.errors = 0

    def record(self, outcome: tuple[datetime, ScreenCheck, CspResult | None]) -> None:
        day, check, result = outcome
        self.errors += check.error is not None
        self.filtered += not check.passed and check.error is None
        self.selected += result is not None and result.decision == "select"
        counts = f"filtered {self.filtered} · selected {self.selected}"
        if self.errors:
            counts += f" · errors {self.errors}"
        self.advance(f"{check.symbol} {day.date()} · {counts}")


def _print_one(result: ScreenResult) -> None:
    ranked = FitTable(
        Column("#", right=True),
        "symbol",
        "decision",
        "put",
        Column("dte", right=True),
        Column("premium", right=True),
        Column("delta", right=True),
        Column("%/week", right=True),
        Column("why", text=True),
        title=f"CSP screen as of {result.as_of.date()}",
    )
    for rank, r in enumerate(result.results, 1):
        o = r.options if r.decision == "select" else None
        ranked.add_row(
            str(rank),
            r.symbol,
            r.decision,
            f"{o.best_expiration} {o.best_strike:g}" if o else "-",
            str(o.dte) if o else "-",
            f"{o.premium:.2f}" if o else "-",
            f"{o.delta:.2f}" if o and o.delta is not None else "-",
            f"{o.weekly_roc:.2f}" if o and o.weekly_roc is not None else "-",
            r.reason or "",
        )
    console.print(ranked)
    table = FitTable(
        "symbol",
        "trend",
        Column("IV/HV", right=True),
        Column("reason", text=True),
        title="Filtered out before any model call",
    )
    for check in result.filtered:
        iv_hv = f"{check.iv_hv:.2f}" if check.iv_hv is not None else "-"
        table.add_row(check.symbol, check.trend or "-", iv_hv, "; ".join(check.reasons))
    console.print(table)
    if result.errors:
        errors = FitTable("symbol", Column("error", text=True), title="Failed with an error")
        for check in result.errors:
            errors.add_row(check.symbol, check.error or "")
        console.print(errors)
    failed = f", {len(result.errors)} failed with an error" if result.errors else ""
    console.print(
        f"{len(result.checks)} screened, {len(result.filtered)} filtered out "
        f"({result.rejected_share:.0%}), {len(result.results)} analysed by the desk{failed}."
    )


def _print_history(history: ScreenHistory) -> None:
    headers = ["screened", "filtered", "analysed", "selected"]
    if history.counts.errors:  # a column only when something failed
        headers.append("errors")
    table = FitTable("date", *(Column(h, right=True) for h in headers), "best", title="CSP screens")
    for day in history.screens:
        best = next((r for r in day.results if r.decision == "select"), None)
        o = best.options if best else None
        counts = [len(day.checks), len(day.filtered), len(day.results)]
        counts += [sum(r.decision == "select" for r in day.results), len(day.errors)]
        table.add_row(
            str(day.as_of.date()),
            *(str(n) for n in counts[: len(headers)]),
            f"{best.symbol} {o.best_expiration} {o.best_strike:g} put" if best and o else "-",
        )
    console.print(table)
    console.print(f"{history.outcomes} symbol-dates screened on {len(history.screens)} dates.")

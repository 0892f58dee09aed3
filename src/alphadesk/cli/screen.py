"""``alphadesk screen``: pre-filter a universe, run the desk on the survivors, rank them."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import typer
from rich.table import Table

from alphadesk.cli.common import console, fail, settings_from

__all__ = ["screen"]


def screen(
    ctx: typer.Context,
    symbols: list[str] | None = typer.Argument(None, help="Symbols; default: the whole universe."),
    strategy: str = typer.Option("csp", help="The strategy to screen for (csp)."),
    as_of: str | None = typer.Option(None, "--as-of", help="Screen as of this date's close."),
    model: str | None = typer.Option(None, "--model", "-m", help="Model for every agent."),
    depth: str = typer.Option("quick", help="quick, standard or deep."),
    concurrency: int = typer.Option(4, min=1, help="Symbols analysed at the same time."),
    as_json: bool = typer.Option(False, "--json", help="Print the screen as JSON."),
) -> None:
    """Screen a universe for cash-secured puts: cheap checks first, agents on the survivors."""
    from alphadesk.cli.csp import parse_as_of
    from alphadesk.cli.live import LiveView
    from alphadesk.data import build_provider
    from alphadesk.data.symbols import normalize_symbol
    from alphadesk.pipelines.csp.run import CspRunner
    from alphadesk.pipelines.csp.screen import screen as run_screen

    if strategy != "csp":
        raise fail(f"unknown strategy {strategy!r}", "the strategies are: csp")
    if depth not in ("quick", "standard", "deep"):
        raise fail(f"unknown depth {depth!r}", "use quick, standard or deep")
    settings = settings_from(ctx)
    market = build_provider(settings)
    try:
        universe = [normalize_symbol(s) for s in symbols] if symbols else market.universe()
    except ValueError as exc:
        raise fail(str(exc)) from None
    instant = parse_as_of(as_of)
    view = LiveView(enabled=not as_json)
    runner = CspRunner(
        settings, market, model=model, concurrency=concurrency, on_event=view.on_event
    )
    with view:
        result = asyncio.run(run_screen(runner, universe, instant, depth=depth))  # type: ignore[arg-type]
    if as_json:
        typer.echo(json.dumps(result.model_dump(mode="json"), indent=2))
        return
    _print(result)


def _print(result: Any) -> None:
    ranked = Table(
        "#",
        "symbol",
        "decision",
        "put",
        "dte",
        "premium",
        "delta",
        "%/week",
        "why",
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
            (r.reason or "")[:70],
        )
    console.print(ranked)
    filtered = [c for c in result.checks if not c.passed]
    table = Table("symbol", "trend", "IV/HV", "reason", title="Filtered out before any model call")
    for check in filtered:
        iv_hv = f"{check.iv_hv:.2f}" if check.iv_hv is not None else "-"
        table.add_row(check.symbol, check.trend or "-", iv_hv, "; ".join(check.reasons)[:90])
    console.print(table)
    console.print(
        f"{len(result.checks)} screened, {len(filtered)} filtered out "
        f"({result.rejected_share:.0%}), {len(result.results)} analysed by the desk."
    )

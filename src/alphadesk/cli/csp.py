"""``alphadesk csp``: the cash-secured-put desk on one or more symbols."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, date, datetime
from typing import Any

import typer

from alphadesk.cli.common import console, err_console, fail, settings_from

__all__ = ["csp"]


def parse_as_of(value: str | None) -> datetime:
    """A date means that day's close on the exchange (data known at the close); a day
    without a session means the last close before it. No date means now."""
    from alphadesk.data.calendar import close_on_or_before, local_date

    if value is None:
        return datetime.now(UTC)
    try:
        day = date.fromisoformat(value)
    except ValueError:
        raise fail(f"--as-of {value!r} is not a date", "use YYYY-MM-DD, e.g. 2021-06-30") from None
    try:
        close = close_on_or_before(day)
    except ValueError as exc:
        raise fail(str(exc)) from None
    if local_date(close) != day:
        err_console.print(f"[dim]{day} has no session: using the close of {local_date(close)}[/]")
    return close


def csp(
    ctx: typer.Context,
    symbols: list[str] = typer.Argument(..., help="One or more symbols, e.g. NVDA AMZN."),
    as_of: str | None = typer.Option(
        None, "--as-of", help="Analyse as of this date's close (YYYY-MM-DD). Default: today."
    ),
    model: str | None = typer.Option(
        None, "--model", "-m", help="LiteLLM model string for every agent, or 'rules' (offline)."
    ),
    depth: str = typer.Option(
        "standard", help="quick, standard or deep: each agent's turn budget."
    ),
    parallel_research: bool = typer.Option(
        False, "--parallel-research", help="Run research alongside the chart step."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
    resume: str | None = typer.Option(None, "--resume", help="Resume an interrupted run by id."),
) -> None:
    """Find a cash-secured put to sell: chart, options and research analysts, then synthesis."""
    from alphadesk.data.errors import DataError
    from alphadesk.data.symbols import normalize_symbol
    from alphadesk.llm.base import ModelError
    from alphadesk.pipelines.csp.models import CspRequest

    settings = settings_from(ctx)
    if depth not in ("quick", "standard", "deep"):
        raise fail(f"unknown depth {depth!r}", "use quick, standard or deep")
    instant = parse_as_of(as_of)
    try:
        requests = [
            CspRequest(
                symbol=normalize_symbol(s),
                as_of=instant,
                depth=depth,
                parallel_research=parallel_research,
            )
            for s in symbols
        ]
    except ValueError as exc:
        raise fail(str(exc)) from None
    try:
        results = asyncio.run(_run(settings, requests, model, resume, live=not as_json))
    except (DataError, ModelError, KeyError) as exc:
        raise fail(str(exc)) from None
    if as_json:
        typer.echo(json.dumps([r.model_dump(mode="json") for r in results], indent=2))
    else:
        _print(results)
    if any(r.decision == "failed" for r in results):
        raise typer.Exit(1)


async def _run(
    settings: Any, requests: list[Any], model: str | None, resume: str | None, *, live: bool
) -> list[Any]:
    from alphadesk.cli.live import LiveView
    from alphadesk.data import build_provider
    from alphadesk.pipelines.csp.run import CspRunner

    view = LiveView(enabled=live)
    runner = CspRunner(settings, build_provider(settings), model=model, on_event=view.on_event)
    for request in requests:
        await runner.preflight(request)  # before the live view: errors print cleanly
    with view:
        if resume is not None:
            result = await runner.analyze(requests[0], resume_run_id=resume)
            return [result] if result is not None else []
        return await runner.analyze_many(requests)


def _print(results: list[Any]) -> None:
    from rich.markdown import Markdown

    from alphadesk.pipelines.csp.report import render_report

    for result in results:
        console.print(Markdown(render_report(result)))
        err_console.print(
            f"[dim]saved as run {result.run_id}: alphadesk runs show {result.run_id}[/]"
        )

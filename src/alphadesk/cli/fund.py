"""``alphadesk fund``: the trading desk on every name, then one book's target weights and
orders from the portfolio manager, within the book's limits and cash."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from alphadesk.cli.common import (
    AS_OF_HELP,
    BAD_INPUT,
    MODEL_HELP,
    RESUME_HELP,
    Depth,
    check_models,
    console,
    err_console,
    fail,
    parse_as_of,
    recorded_request,
    settings_from,
)
from alphadesk.cli.worker import TEMPORAL_HELP, run_on_temporal

if TYPE_CHECKING:
    from alphadesk.config import Settings
    from alphadesk.data.base import MarketData
    from alphadesk.pipelines.fund.models import FundRequest, FundResult

__all__ = ["fund"]


def fund(
    ctx: typer.Context,
    symbols: list[str] | None = typer.Argument(
        None, metavar="SYMBOL...", help="The names of the book, e.g. AAPL JPM PG."
    ),
    universe: str | None = typer.Option(
        None, "--universe", metavar="INDEX", help="Every member of an index instead: dow30..."
    ),
    as_of: str | None = typer.Option(None, "--as-of", metavar="DATE", help=AS_OF_HELP),
    account: str = typer.Option(
        "paper", "--account", help="The paper account whose holdings and cash are the book."
    ),
    model: str | None = typer.Option(None, "--model", "-m", metavar="MODEL", help=MODEL_HELP),
    workers: int = typer.Option(
        1, "--workers", min=1, help="Worker processes for the desks (1: in this process)."
    ),
    depth: Depth = typer.Option("standard", help="Each agent's turn budget."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    resume: str | None = typer.Option(None, "--resume", metavar="RUN_ID", help=RESUME_HELP),
    temporal: str | None = typer.Option(None, "--temporal", metavar="ADDRESS", help=TEMPORAL_HELP),
) -> None:
    """One book over many names: a desk decision on each, then target weights and orders."""
    from alphadesk.data import build_provider
    from alphadesk.data.errors import DataError
    from alphadesk.llm.base import ModelError
    from alphadesk.store import RunConflict

    settings = settings_from(ctx)
    check_models(settings, model)
    market = build_provider(settings)
    if resume is not None:
        request = recorded_request(settings, resume, "fund", symbols or ())
    else:
        request = _request(ctx, market, symbols or [], universe, as_of, account, depth)
    if temporal is not None:
        if resume is not None:
            raise fail("--resume and --temporal together", "a Temporal run resumes itself")
        result: FundResult | None
        (result,) = run_on_temporal(
            settings, market, "fund", [request], address=temporal, model=model, live=not as_json
        )
    else:
        import asyncio

        try:
            result = asyncio.run(
                _run(settings, market, request, model, workers, resume, live=not as_json)
            )
        except (DataError, ModelError, KeyError, RunConflict) as exc:
            raise fail(str(exc)) from None
    if result is None:
        raise fail("the run stopped before its orders", f"continue it with --resume {resume}")
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        _print(result)
    if result.decision == "failed":
        raise typer.Exit(1)


def _request(
    ctx: typer.Context,
    market: MarketData,
    symbols: list[str],
    universe: str | None,
    as_of: str | None,
    account: str,
    depth: Depth,
) -> FundRequest:
    """The request, or a clear error (exit 2) before anything is recorded."""
    from alphadesk.data.errors import DataError
    from alphadesk.pipelines.fund.book import fund_request
    from alphadesk.portfolio import AccountNotFound

    instant = parse_as_of(as_of, market=market, symbols=symbols)
    try:
        return fund_request(market, settings_from(ctx).store_path, instant, symbols=symbols,
                            universe=universe, account=account, depth=depth)  # fmt: skip
    except AccountNotFound as exc:
        hint = f"open it with `alphadesk portfolio open {exc.name} --cash C`"
        raise fail(str(exc), hint, BAD_INPUT) from None
    except DataError as exc:
        hint = "see `alphadesk data list` for what the data covers"
        raise fail(str(exc), hint, BAD_INPUT) from None
    except ValueError as exc:
        raise fail(str(exc), "see `alphadesk fund --help`", BAD_INPUT) from None


async def _run(
    settings: Settings,
    market: MarketData,
    request: FundRequest,
    model: str | None,
    workers: int,
    resume: str | None,
    *,
    live: bool,
) -> FundResult | None:
    from alphadesk.cli.live import LiveView
    from alphadesk.pipelines.fund.pipeline import Fund
    from alphadesk.pipelines.runner import PipelineRunner

    pipeline = Fund(settings, market, model=model, workers=workers)
    # Workers forked now, before the live view's and the checkpoints' threads start.
    pipeline.pool = pipeline.desk_runs().started(len(request.symbols))
    view = LiveView(enabled=live)
    try:
        with view:
            return await PipelineRunner(settings, pipeline, on_event=view.on_event).analyze(
                request, resume_run_id=resume
            )
    finally:
        if pipeline.pool is not None:
            pipeline.pool.shutdown(wait=True, cancel_futures=True)


def _print(result: FundResult) -> None:
    from alphadesk.cli.report import Report
    from alphadesk.pipelines.fund.report import render_report

    console.print(Report(render_report(result)))
    err_console.print(f"[dim]saved as run {result.run_id}: alphadesk runs show {result.run_id}[/]")

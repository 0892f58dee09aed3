"""``alphadesk csp``: the cash-secured-put desk on one or more symbols."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

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
    recorded_request,
    settings_from,
)
from alphadesk.cli.worker import TEMPORAL_HELP, run_on_temporal

if TYPE_CHECKING:
    from alphadesk.config import Settings
    from alphadesk.data.base import MarketData
    from alphadesk.pipelines.csp.models import CspRequest, CspResult

__all__ = ["csp"]


def csp(
    ctx: typer.Context,
    symbols: list[str] = typer.Argument(
        ..., metavar="SYMBOL", help="One or more symbols, e.g. NVDA AMZN."
    ),
    as_of: str | None = typer.Option(None, "--as-of", metavar="DATE", help=AS_OF_HELP),
    model: str | None = typer.Option(None, "--model", "-m", metavar="MODEL", help=MODEL_HELP),
    depth: Depth = typer.Option("standard", help="Each agent's turn budget."),
    parallel_research: bool = typer.Option(
        False, "--parallel-research", help="Run research alongside the chart step."
    ),
    dte: str | None = typer.Option(None, "--dte", metavar="MIN-MAX", help=DTE_HELP),
    delta: str | None = typer.Option(None, "--delta", metavar="MIN-MAX", help=DELTA_HELP),
    min_roc: float | None = typer.Option(
        None, "--min-roc", metavar="PERCENT", min=0, help=ROC_HELP
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
    resume: str | None = typer.Option(None, "--resume", metavar="RUN_ID", help=RESUME_HELP),
    temporal: str | None = typer.Option(None, "--temporal", metavar="ADDRESS", help=TEMPORAL_HELP),
) -> None:
    """Find a cash-secured put to sell: chart, options and research analysts, then synthesis."""
    import asyncio

    from alphadesk.data import build_provider
    from alphadesk.data.errors import DataError
    from alphadesk.data.symbols import normalize_symbol
    from alphadesk.llm.base import ModelError
    from alphadesk.pipelines.csp.models import CspRequest
    from alphadesk.store import RunConflict

    settings = settings_from(ctx)
    check_models(settings, model)
    market = build_provider(settings)
    try:
        wanted = [normalize_symbol(s) for s in symbols]
    except ValueError as exc:
        raise fail(str(exc)) from None
    requests: list[CspRequest]
    if resume is not None:  # it goes on with the request it started with
        requests = [recorded_request(settings, resume, "csp", wanted)]
    else:
        instant = parse_as_of(as_of, market=market, symbols=wanted)
        constraints = parse_constraints(dte, delta, min_roc)
        requests = [
            CspRequest(
                symbol=s,
                as_of=instant,
                depth=depth,
                parallel_research=parallel_research,
                constraints=constraints,
            )
            for s in wanted
        ]
    if temporal is not None:
        if resume is not None:
            raise fail("--resume and --temporal together", "a Temporal run resumes itself")
        results = run_on_temporal(
            settings, market, "csp", requests, address=temporal, model=model, live=not as_json
        )
    else:
        try:
            results = asyncio.run(_run(settings, market, requests, model, resume, live=not as_json))
        except (DataError, ModelError, KeyError, RunConflict) as exc:
            raise fail(str(exc)) from None
    if as_json:
        typer.echo(json.dumps([r.model_dump(mode="json") for r in results], indent=2))
    else:
        _print(results)
    if any(r.decision == "failed" for r in results):
        raise typer.Exit(1)


async def _run(
    settings: Settings,
    market: MarketData,
    requests: list[CspRequest],
    model: str | None,
    resume: str | None,
    *,
    live: bool,
) -> list[CspResult]:
    from alphadesk.tools.chart.drawing import start_drawing_process

    # The report's chart is drawn apart: its libraries load on the other core meanwhile.
    start_drawing_process()
    from alphadesk.cli.live import LiveView
    from alphadesk.pipelines.csp.pipeline import CspPipeline
    from alphadesk.pipelines.runner import PipelineRunner

    view = LiveView(enabled=live)
    pipeline = CspPipeline(settings, market, model=model)
    runner = PipelineRunner(settings, pipeline, on_event=view.on_event)
    for request in requests:
        await runner.preflight(request)  # before the live view: errors print cleanly
    with view:
        if resume is not None:
            result = await runner.analyze(requests[0], resume_run_id=resume)
            return [result] if result is not None else []
        return await runner.analyze_many(requests)


def _print(results: list[CspResult]) -> None:
    from alphadesk.cli.report import Report
    from alphadesk.pipelines.csp.report import render_report

    for result in results:
        console.print(Report(render_report(result)))
        err_console.print(
            f"[dim]saved as run {result.run_id}: alphadesk runs show {result.run_id}[/]"
        )

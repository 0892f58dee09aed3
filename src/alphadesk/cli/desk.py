"""``alphadesk desk``: the trading desk's BUY, HOLD or SELL on one symbol, argued out."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from alphadesk.cli.common import (
    AS_OF_HELP,
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
    from alphadesk.pipelines.desk.models import DeskRequest, DeskResult

__all__ = ["desk"]


def desk(
    ctx: typer.Context,
    symbol: str = typer.Argument(..., metavar="SYMBOL", help="The symbol to decide on, e.g. NVDA."),
    as_of: str | None = typer.Option(None, "--as-of", metavar="DATE", help=AS_OF_HELP),
    analysts: str | None = typer.Option(
        None,
        "--analysts",
        metavar="NAMES",
        help="Comma-separated: market,sentiment,news,fundamentals.",
    ),
    rounds: int | None = typer.Option(
        None,
        "--rounds",
        min=0,
        max=5,
        help="Bull/bear rounds: both argue, then each rebuts the other (0: none).",
    ),
    risk_rounds: int | None = typer.Option(
        None,
        "--risk-rounds",
        min=0,
        max=5,
        help="Risk rounds: all three argue, then each rebuts the others (0: none).",
    ),
    memory: bool | None = typer.Option(
        None, "--memory/--no-memory", help="Recall and reflect (default: the settings)."
    ),
    model: str | None = typer.Option(None, "--model", "-m", metavar="MODEL", help=MODEL_HELP),
    depth: Depth = typer.Option("standard", help="Each agent's turn budget."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    resume: str | None = typer.Option(None, "--resume", metavar="RUN_ID", help=RESUME_HELP),
    temporal: str | None = typer.Option(None, "--temporal", metavar="ADDRESS", help=TEMPORAL_HELP),
) -> None:
    """BUY, HOLD or SELL: analysts, a bull/bear debate, a trader, a risk discussion and a judge."""
    import asyncio

    from pydantic import ValidationError

    from alphadesk.cli.common import fail_invalid
    from alphadesk.data import build_provider
    from alphadesk.data.errors import DataError
    from alphadesk.data.symbols import normalize_symbol
    from alphadesk.llm.base import ModelError
    from alphadesk.pipelines.desk.models import DeskRequest
    from alphadesk.store import RunConflict

    settings = settings_from(ctx)
    check_models(settings, model)
    market = build_provider(settings)
    try:
        wanted = normalize_symbol(symbol)
    except ValueError as exc:
        raise fail(str(exc)) from None
    request: DeskRequest
    if resume is not None:  # it goes on with the request it started with
        request = recorded_request(settings, resume, "desk", [wanted])
    else:
        instant = parse_as_of(as_of, market=market, symbols=[wanted])
        try:
            request = DeskRequest.from_settings(
                settings,
                symbol=wanted,
                as_of=instant,
                depth=depth,
                analysts=[a.strip() for a in analysts.split(",") if a.strip()]
                if analysts
                else None,
                rounds=rounds,
                risk_rounds=risk_rounds,
                memory=memory,
            )
        except ValidationError as exc:
            raise fail_invalid(exc, "see `alphadesk desk --help`") from None
        except ValueError as exc:
            raise fail(str(exc)) from None
    result: DeskResult | None
    if temporal is not None:
        if resume is not None:
            raise fail("--resume and --temporal together", "a Temporal run resumes itself")
        (result,) = run_on_temporal(
            settings, market, "desk", [request], address=temporal, model=model, live=not as_json
        )
    else:
        try:
            result = asyncio.run(_run(settings, market, request, model, resume, live=not as_json))
        except (DataError, ModelError, KeyError, RunConflict) as exc:
            raise fail(str(exc)) from None
    if result is None:
        raise fail("the run stopped before a decision", f"continue it with --resume {resume}")
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        _print(result)
    if result.decision == "failed":
        raise typer.Exit(1)


async def _run(
    settings: Settings,
    market: MarketData,
    request: DeskRequest,
    model: str | None,
    resume: str | None,
    *,
    live: bool,
) -> DeskResult | None:
    from alphadesk.tools.chart.drawing import start_drawing_process

    # The report's chart is drawn apart: its libraries load on the other core meanwhile.
    start_drawing_process()
    from alphadesk.cli.live import LiveView
    from alphadesk.pipelines.desk.pipeline import TradingDesk
    from alphadesk.pipelines.runner import PipelineRunner

    view = LiveView(enabled=live)
    runner = PipelineRunner(
        settings,
        TradingDesk(settings, market, model=model),
        on_event=view.on_event,
    )
    await runner.preflight(request)  # before the live view: errors print cleanly
    with view:
        return await runner.analyze(request, resume_run_id=resume)


def _print(result: DeskResult) -> None:
    from alphadesk.cli.report import Report
    from alphadesk.pipelines.desk.report import render_report

    console.print(Report(render_report(result)))
    err_console.print(f"[dim]saved as run {result.run_id}: alphadesk runs show {result.run_id}[/]")

"""``alphadesk algo``: the strategy lab develops a Backtrader strategy that meets a goal."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from alphadesk.cli.common import (
    BAD_INPUT,
    MODEL_HELP,
    RESUME_HELP,
    Depth,
    check_models,
    console,
    err_console,
    fail,
    parse_as_of,
    parse_day,
    settings_from,
)

if TYPE_CHECKING:
    from alphadesk.config import Settings
    from alphadesk.data.base import MarketData
    from alphadesk.pipelines.algo.models import AlgoRequest, AlgoResult

__all__ = ["algo"]


def algo(
    ctx: typer.Context,
    symbol: str = typer.Argument(..., metavar="SYMBOL", help="The symbol to trade, e.g. AAPL."),
    goal: str = typer.Option(
        ...,
        "--goal",
        "-g",
        metavar="GOAL",
        help='What the strategy must achieve, e.g. "Sharpe above 1 with drawdown under 20%".',
    ),
    variants: int = typer.Option(
        3, "--variants", "-n", metavar="N", min=1, max=12, help="Strategy variants per iteration."
    ),
    iterations: int = typer.Option(
        3, "--iterations", "-k", metavar="K", min=1, max=20, help="Iterations at most."
    ),
    model: str | None = typer.Option(None, "--model", "-m", metavar="MODEL", help=MODEL_HELP),
    start: str | None = typer.Option(
        None, "--from", metavar="DATE", help="First day of the lab's window. Default: 4 years back."
    ),
    end: str | None = typer.Option(
        None,
        "--to",
        metavar="DATE",
        help="Last day (its close), the end of the holdout. "
        "Default: now, or the last date the data covers.",
    ),
    validation: float | None = typer.Option(
        None,
        "--validation",
        metavar="SHARE",
        min=0.01,
        max=0.49,
        help="Share of the window the gate validates on, before the holdout "
        "(default: the settings', 0.2).",
    ),
    holdout: float | None = typer.Option(
        None,
        "--holdout",
        metavar="SHARE",
        min=0.01,
        max=0.49,
        help="Share of the window at its end, sealed until the lab has chosen "
        "(default: the settings', 0.2).",
    ),
    min_dsr: float | None = typer.Option(
        None,
        "--min-dsr",
        metavar="P",
        min=0.01,
        max=0.99,
        help="SUCCESS needs a deflated Sharpe probability above this (default: the settings', "
        "0.95).",
    ),
    max_pbo: float | None = typer.Option(
        None,
        "--max-pbo",
        metavar="P",
        min=0.01,
        max=0.99,
        help="SUCCESS needs a probability of backtest overfitting below this (default: the "
        "settings', 0.5).",
    ),
    max_cost: float | None = typer.Option(
        None, "--max-cost", metavar="USD", min=0.0, help="Stop when the models have spent this."
    ),
    save: Path | None = typer.Option(
        None, "--save", metavar="FILE", dir_okay=False, help="Also copy the best strategy here."
    ),
    depth: Depth = typer.Option("standard", help="Each agent's turn budget."),
    memory: bool | None = typer.Option(
        None, "--memory/--no-memory", help="Recall and store lessons (default: the settings)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    resume: str | None = typer.Option(None, "--resume", metavar="RUN_ID", help=RESUME_HELP),
) -> None:
    """Research, write strategy variants, backtest them in a sandbox on a search and a
    validation period, and iterate until one meets the goal and survives its number of
    trials (deflated Sharpe ratio, PBO) or a budget runs out; then run the chosen strategy
    once on the holdout, which the search never saw."""
    import asyncio

    from pydantic import ValidationError

    from alphadesk.cli.common import fail_invalid
    from alphadesk.data import build_provider
    from alphadesk.data.errors import DataError
    from alphadesk.data.symbols import normalize_symbol
    from alphadesk.llm.base import ModelError
    from alphadesk.pipelines.algo.models import AlgoRequest
    from alphadesk.store import RunConflict

    settings = settings_from(ctx)
    check_models(settings, model)
    market = build_provider(settings)
    try:
        wanted = normalize_symbol(symbol)
    except ValueError as exc:
        raise fail(str(exc), code=BAD_INPUT) from None
    instant = parse_as_of(end, market=market, symbols=[wanted], option="--to")
    first = parse_day(start, "--from") if start else None
    if first is not None and first >= instant.date():
        raise fail(
            f"--from {first} is not before --to {instant.date()}", "swap the dates", BAD_INPUT
        )
    try:
        request = AlgoRequest(
            symbol=wanted,
            as_of=instant,
            depth=depth,
            goal=goal,
            variants=variants,
            iterations=iterations,
            start=first,
            validation=validation,
            holdout=holdout,
            min_deflated_sharpe=min_dsr,
            max_pbo=max_pbo,
            max_cost_usd=max_cost or None,
            memory=settings.memory.enabled if memory is None else memory,
        )
    except ValidationError as exc:
        raise fail_invalid(exc, "see `alphadesk algo --help`") from None
    try:
        result = asyncio.run(_run(settings, market, request, model, resume, live=not as_json))
    except (DataError, ModelError, KeyError, RunConflict) as exc:
        raise fail(str(exc)) from None
    except ValueError as exc:  # too few bars for three periods: names the minimum
        raise fail(str(exc), code=BAD_INPUT) from None
    if result is None:
        raise fail("the run stopped before a decision", f"continue it with --resume {resume}")
    if save is not None and result.strategy_file:
        shutil.copyfile(result.strategy_file, save)
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        _print(result, save)
    if result.decision == "failed":
        raise typer.Exit(1)


async def _run(
    settings: Settings,
    market: MarketData,
    request: AlgoRequest,
    model: str | None,
    resume: str | None,
    *,
    live: bool,
) -> AlgoResult | None:
    from alphadesk.cli.live import LiveView
    from alphadesk.pipelines.algo.pipeline import StrategyLab
    from alphadesk.pipelines.runner import PipelineRunner

    view = LiveView(enabled=live)
    lab = StrategyLab(settings, market, model=model)
    runner = PipelineRunner(settings, lab, on_event=view.on_event)
    await runner.preflight(request)  # before the live view: errors print cleanly
    if resume is None:
        lab.periods(request)  # a window too short fails here, before a run is recorded
    with view:
        return await runner.analyze(request, resume_run_id=resume)


def _print(result: AlgoResult, save: Path | None) -> None:
    from alphadesk.cli.report import Report
    from alphadesk.pipelines.algo.report import render_report

    console.print(Report(render_report(result)))
    if result.strategy_file:
        where = save or result.strategy_file
        err_console.print(f"[dim]strategy: {where}[/]")
    err_console.print(f"[dim]saved as run {result.run_id}: alphadesk runs show {result.run_id}[/]")

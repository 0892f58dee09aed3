"""``alphadesk eval --benchmark stockbench`` and ``alphadesk eval --portfolio``: the desk as
one book, under StockBench's protocol beside the paper's published rows, or on any window
of the data; both beside the book baselines."""

from __future__ import annotations

import json as jsonlib
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.text import Text

from alphadesk.cli.common import (
    BAD_INPUT,
    console,
    err_console,
    fail,
    settings_from,
    window_day,
)
from alphadesk.cli.progress import DecisionBar
from alphadesk.cli.tables import Column, FitTable

if TYPE_CHECKING:
    from alphadesk.pipelines.evaluation.desk_book import Depth, DeskBook
    from alphadesk.pipelines.evaluation.stockbench import Protocol

__all__ = ["BookWalk", "run_portfolio", "run_stockbench"]

_DATA_HINT = (
    "the bundled StockBench bars of most names begin 2024-12-13, so 2025-01-14 is the first "
    "--from with 20 sessions before it; they end 2025-07-31"
)


@dataclass(frozen=True)
class BookWalk:
    """How a book is walked: its worker processes, whether it starts over, whether
    analysts' reports are reused, its depth, and whether the desk learns as it goes."""

    workers: int | None = None
    fresh: bool = False
    reuse: bool = False
    depth: Depth = "full"
    memory: bool = False


def run_stockbench(
    ctx: typer.Context,
    symbols: list[str] | None,
    start: str | None,
    end: str | None,
    *,
    every: int,
    model: str,
    out: Path | None,
    walk: BookWalk,
    json: bool,
) -> None:
    """Run the benchmark (another window or fewer names when given) and print it."""
    from pydantic import ValidationError

    from alphadesk.pipelines.evaluation.stockbench import PROTOCOL, Protocol

    names = [s for group in symbols or [] for s in group.split(",") if s.strip()]
    try:
        protocol = Protocol(
            symbols=tuple(names) or PROTOCOL.symbols,
            start=window_day(start, "--from") if start else PROTOCOL.start,
            end=window_day(end, "--to") if end else PROTOCOL.end,
        )
    except ValidationError as exc:
        raise fail(str(exc.errors()[0]["msg"]), "see `alphadesk eval --help`", BAD_INPUT) from None
    result = _run(ctx, protocol, every, model, out, walk, _DATA_HINT)
    _show(result, json)


def run_portfolio(
    ctx: typer.Context,
    symbols: list[str],
    start: str,
    end: str,
    *,
    every: int,
    model: str,
    out: Path | None,
    walk: BookWalk,
    json: bool,
    cash: float,
    costs: float,
) -> None:
    """Run ``symbols`` as one book from ``start`` to ``end`` and print it."""
    from pydantic import ValidationError

    from alphadesk.pipelines.evaluation.stockbench import Protocol

    try:
        protocol = Protocol(
            kind="portfolio",
            symbols=tuple(symbols),
            start=window_day(start, "--from"),
            end=window_day(end, "--to"),
            cash=cash,
            commission_bps=costs * 1e4,
        )
    except ValidationError as exc:
        raise fail(str(exc.errors()[0]["msg"]), "see `alphadesk eval --help`", BAD_INPUT) from None
    hint = "`alphadesk data list` shows each symbol's range and fields"
    _show(_run(ctx, protocol, every, model, out, walk, hint), json)


def _show(result: DeskBook, json: bool) -> None:
    protocol = result.protocol
    if json:
        payload: dict[str, object] = {
            "folder": str(result.folder),
            "protocol": protocol.model_dump(mode="json"),
        }
        payload |= {"rows": [r.model_dump() for r in result.rows], "manifest": result.manifest}
        typer.echo(jsonlib.dumps(payload, indent=2))
        return
    _print(result)


def _run(
    ctx: typer.Context,
    protocol: Protocol,
    every: int,
    model: str,
    out: Path | None,
    walk: BookWalk,
    hint: str,
) -> DeskBook:
    """The book evaluated, walked as ``walk`` says."""
    import asyncio

    from alphadesk.data import DataError
    from alphadesk.llm.base import CacheMiss
    from alphadesk.pipelines.evaluation import EvaluationError, LookAheadError
    from alphadesk.pipelines.evaluation.desk_book import evaluate_desk_book

    settings = settings_from(ctx)
    window = protocol.start == date(2025, 3, 1) and protocol.end == date(2025, 6, 30)
    paper = window and protocol.kind == "stockbench"
    with DecisionBar() as progress:  # on stderr: --json output stays pure
        try:
            return asyncio.run(
                evaluate_desk_book(
                    settings,
                    protocol,
                    every=every,
                    model=model,
                    out=out,
                    workers=walk.workers,
                    fresh=walk.fresh,
                    paper=paper,
                    reuse=walk.reuse,
                    depth=walk.depth,
                    memory=walk.memory,
                    on_start=progress.start,
                    on_decision=progress.record,
                    on_resume=progress.skip,
                )
            )
        except (EvaluationError, DataError, ValueError) as exc:
            raise fail(str(exc), hint, BAD_INPUT) from None
        except LookAheadError as exc:
            raise fail(f"the evaluation is void: {exc}") from None
        except CacheMiss as exc:
            raise fail(str(exc), "delete the folder's manifest.json to record again") from None


def _print(result: DeskBook) -> None:
    from alphadesk.pipelines.evaluation.stockbench import HEADERS, cells, notes, title

    rows = result.rows
    table = FitTable(
        HEADERS[0], *(Column(h, right=True) for h in HEADERS[1:]), title=title(result.protocol)
    )
    for i, row in enumerate(rows):
        shown: list[str | Text] = list(cells(row))
        if row.source == "ours":
            shown[0] = Text(row.name, style="bold")
        last = i + 1 < len(rows) and rows[i + 1].source != row.source
        table.add_row(*shown, end_section=last)
    console.print(table)
    paper = any(r.source == "paper" for r in rows)
    console.print(f"[dim]{notes(result.protocol, paper=paper)}[/]")
    manifest = result.manifest
    err_console.print(
        f"[dim]every {result.spec.every} sessions; cache {manifest['cache_mode']}: "
        f"{manifest['live_model_calls']} live model calls of {manifest['model_calls']} "
        f"(${manifest['live_cost_usd']:.4f}); {manifest['wall_seconds']:.1f}s; files in "
        f"{result.folder}[/]"
    )

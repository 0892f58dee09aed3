"""``alphadesk eval``: walk a desk forward over past dates and score it beside the baselines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import typer
from rich.text import Text

from alphadesk.cli.common import (
    BAD_INPUT,
    MODEL_HELP,
    check_models,
    console,
    err_console,
    fail,
    fail_invalid,
    ray_cluster,
    settings_from,
    window_day,
)
from alphadesk.cli.progress import DecisionBar
from alphadesk.cli.tables import Cell, Column, FitTable

if TYPE_CHECKING:
    from alphadesk.cluster import RayCluster
    from alphadesk.pipelines.evaluation.evaluate import Evaluation
    from alphadesk.pipelines.evaluation.models import EvalSpec

__all__ = ["evaluate_command"]

DEFAULT_SYMBOLS = ["AAPL,MSFT,IBM"]


def evaluate_command(
    ctx: typer.Context,
    desk: Literal["desk", "csp"] = typer.Option(
        "desk", "--desk", help="The trading desk (BUY/HOLD/SELL) or the cash-secured-put desk."
    ),
    symbols: list[str] | None = typer.Option(
        None,
        "--symbols",
        "-s",
        metavar="SYMBOL",
        help="Symbols, comma-separated or repeated. Default: AAPL,MSFT,IBM.",
    ),
    start: str | None = typer.Option(
        None, "--from", metavar="DATE", help="First date. Default: 2012-01-01 (StockBench: its)."
    ),
    end: str | None = typer.Option(
        None, "--to", metavar="DATE", help="Last date. Default: 2012-12-31 (StockBench: its)."
    ),
    every: int | None = typer.Option(
        None,
        "--every",
        min=1,
        help="Decide every N-th trading session. Default: 10 (StockBench: 1).",
    ),
    model: str = typer.Option("rules", "--model", "-m", metavar="MODEL", help=MODEL_HELP),
    out: Path | None = typer.Option(
        None,
        "--out",
        metavar="DIR",
        file_okay=False,
        help="Folder for the table, charts, cache and runs. Default: data_dir/evals/<name>.",
    ),
    long_short: bool = typer.Option(
        False, "--long-short", help="Trading desk: SELL goes short (default: flat)."
    ),
    cash: float = typer.Option(100_000.0, help="Capital per symbol."),
    commission: float = typer.Option(0.001, help="Commission per fill, a fraction of value."),
    slippage: float = typer.Option(0.0005, help="Slippage per fill, a fraction of the price."),
    fraction: float = typer.Option(0.95, help="Share of equity per position (1 = all-in)."),
    contract_fee: float = typer.Option(0.65, help="CSP: fee per put contract sold."),
    concurrency: int = typer.Option(
        2, min=1, help="Decisions in flight at once, in all (at least one per worker)."
    ),
    ray: bool = typer.Option(
        False, "--ray", help="Walk the symbols on a Ray cluster; a local one by default."
    ),
    ray_address: str | None = typer.Option(
        None,
        "--ray-address",
        metavar="ADDRESS",
        help="With --ray: the cluster to join, 'auto' or 'ray://HOST:10001'.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the table as JSON."),
    universe: Literal["all", "sp500", "nasdaq100", "dow30"] | None = typer.Option(
        None,
        "--universe",
        help="all: every symbol whose daily bars cover the window and its warm-up (a year "
        "before it; with --portfolio, 20 sessions); an index: its members on --from among "
        "those. `alphadesk data list` shows the ranges. Not with --symbols.",
    ),
    workers: int | None = typer.Option(
        None,
        "--workers",
        min=1,
        help="Processes deciding at once (1: in this process). Default: one per core.",
    ),
    fresh: bool = typer.Option(
        False,
        "--fresh",
        help="Decide every date again, discarding the decisions recorded in the folder "
        "(by default a rerun continues from them); with --anonymize, both markets'.",
    ),
    anonymize: bool = typer.Option(
        False,
        "--anonymize",
        help="Also decide on a disguised market (other names, price levels, years) and show "
        "both side by side: a model that remembers the period does worse there.",
    ),
    disguise_seed: int | None = typer.Option(
        None,
        "--disguise-seed",
        metavar="N",
        help="With --anonymize: the disguise to draw. Default: 1.",
    ),
    benchmark: Literal["stockbench"] | None = typer.Option(
        None,
        "--benchmark",
        help="stockbench: StockBench's protocol (20 Dow stocks, $100,000, 2025-03-01 to "
        "06-30, fills and marks at the open): the paper's published rows beside its passive "
        "baseline as we compute it and our book baselines.",
    ),
    reuse_reports: bool = typer.Option(
        False,
        "--reuse-reports",
        help="With --portfolio or --benchmark: reuse an analyst's report of an earlier day "
        "while every tool it called reads the same (fewer model calls and tokens).",
    ),
    depth: Literal["full", "triage"] = typer.Option(
        "full",
        "--depth",
        help="With --portfolio or --benchmark: full asks the whole desk on every name and "
        "day; triage asks it only when a name has no decision yet, 5 sessions have passed "
        "since its last one, it moved more than 2 daily volatilities, or a filing came out "
        "since; news alone asks a quick update (the news analyst, no debates); otherwise "
        "the name carries its last decision.",
    ),
    memory: bool = typer.Option(
        False,
        "--memory",
        help="With --portfolio or --benchmark: the desk learns as the book goes, from the "
        "outcomes of its own decisions known by each day (decided day by day, here).",
    ),
    portfolio: bool = typer.Option(
        False,
        "--portfolio",
        help="Run the symbols as one book: one cash balance (--cash), the desk's longs in "
        "equal weights traded at the next open with --commission and --slippage, dividends "
        "credited, scored beside equal weight held.",
    ),
) -> None:
    """Walk a desk forward and score its decisions beside the baselines, after costs.

    At every N-th session from --from to --to the desk decides on data known then; the
    decisions are traded with costs and scored beside buy & hold, sma_cross, macd, kdj_rsi
    and zmr (CSP: buy & hold and a mechanically picked put), with block-bootstrap 95 %
    intervals and the desk's decision mix beside a trend rule's. Each decision is recorded
    as it is made: run again (after Ctrl-C or a crash, too), the same evaluation continues
    from the recorded decisions and writes the same bytes.
    """
    from pydantic import ValidationError

    from alphadesk.cli.stockbench import BookWalk
    from alphadesk.pipelines.evaluation import EvalSpec

    if memory and workers is not None:
        raise fail(
            "--memory decides day by day in this process, so --workers does not apply",
            "drop --workers",
            BAD_INPUT,
        )
    walk = BookWalk(workers, fresh, reuse_reports, depth, memory)
    if portfolio:
        if benchmark or desk != "desk" or anonymize or ray or long_short:
            raise fail(
                "--portfolio runs the trading desk as one long-only book",
                "drop --benchmark, --desk csp, --anonymize, --ray and --long-short",
                BAD_INPUT,
            )
        from alphadesk.cli.stockbench import run_portfolio

        start, end = start or "2012-01-01", end or "2012-12-31"
        check_models(settings_from(ctx), model)
        names = _symbols(ctx, symbols, universe, start, end, book=True)
        run_portfolio(
            ctx, names, start, end, every=every or 10, model=model, out=out, walk=walk,
            json=as_json, cash=cash, costs=commission + slippage,
        )  # fmt: skip
        return
    if benchmark is not None:
        if desk != "desk" or universe or anonymize or ray or long_short:
            raise fail(
                "--benchmark stockbench runs the trading desk as one long-only book",
                "drop --desk csp, --universe, --anonymize, --ray and --long-short",
                BAD_INPUT,
            )
        from alphadesk.cli.stockbench import run_stockbench

        run_stockbench(
            ctx, symbols, start, end, every=every or 1, model=model, out=out, walk=walk,
            json=as_json,
        )  # fmt: skip
        return
    if reuse_reports or depth != "full" or memory:
        raise fail(
            "--reuse-reports, --depth triage and --memory work across the days of one book",
            "add --portfolio or --benchmark stockbench",
            BAD_INPUT,
        )
    start, end, every = start or "2012-01-01", end or "2012-12-31", every or 10

    check_models(settings_from(ctx), model)
    cluster = ray_cluster(ray, ray_address)
    names = _symbols(ctx, symbols, universe, start, end)
    try:
        spec = EvalSpec(
            desk=desk,
            symbols=names,
            start=window_day(start, "--from"),
            end=window_day(end, "--to"),
            every=every,
            model=model,
            long_short=long_short,
            cash=cash,
            commission=commission,
            slippage=slippage,
            fraction=fraction,
            contract_fee=contract_fee,
            concurrency=concurrency,
        )
    except ValidationError as exc:
        raise fail_invalid(exc, "see `alphadesk eval --help`") from None
    if anonymize:
        from alphadesk.cli.anonymize import run_anonymized

        how = {"cluster": cluster, "workers": workers, "fresh": fresh}
        run_anonymized(ctx, spec, out, seed=disguise_seed, json=as_json, **how)
        return
    if disguise_seed is not None:
        raise fail(
            "--disguise-seed draws the disguise of --anonymize", "add --anonymize", BAD_INPUT
        )
    result = _run(ctx, spec, out, cluster=cluster, workers=workers, fresh=fresh)
    if as_json:
        payload: dict[str, object] = {
            "folder": str(result.folder),
            "spec": spec.model_dump(mode="json"),
        }
        payload |= {"rows": result.rows, "manifest": result.manifest}
        typer.echo(json.dumps(payload, indent=2, default=str))
        return
    _print(result)


def _symbols(
    ctx: typer.Context,
    symbols: list[str] | None,
    universe: str | None,
    start: str,
    end: str,
    *,
    book: bool = False,
) -> list[str]:
    """The symbols asked for, or the universe's (named on stderr): those whose bars cover
    the window and its warm-up (a year; a ``book``'s, 20 sessions), of an index: its
    members on --from among them."""
    if universe is None:
        groups = symbols or DEFAULT_SYMBOLS
        return [s.strip() for group in groups for s in group.split(",") if s.strip()]
    if symbols:
        raise fail(
            "--symbols and --universe exclude each other", "give one or the other", BAD_INPUT
        )
    from datetime import timedelta

    from alphadesk.data import build_provider
    from alphadesk.data.universe import INDICES, bundled_membership
    from alphadesk.pipelines.evaluation import universe as symbols_of
    from alphadesk.pipelines.evaluation.evaluate import WARM_UP

    first, last = window_day(start, "--from"), window_day(end, "--to")
    # A book's rules read 20 sessions before --from (about four weeks; the walk itself
    # refuses a window with fewer, before deciding anything).
    warm = timedelta(weeks=4) if book else WARM_UP
    found = symbols_of(build_provider(settings_from(ctx)).coverage(), first, last, warm)
    said = "a year" if not book else "20 sessions"
    if universe != "all":
        members = {m.symbol for m in bundled_membership().members(universe, first)}
        err_console.print(
            f"[dim]{INDICES[universe]} on {first}: {len(members)} members, "
            f"{len(members & set(found))} with daily bars over the window[/]"
        )
        found = [s for s in found if s in members]
    if not found:
        raise fail(
            f"no symbol has daily bars from {said} before {first} to {last}"
            + ("" if universe == "all" else f" among the members of {INDICES[universe]} then"),
            "see `alphadesk data list` for each symbol's range, and pick a window inside them",
            BAD_INPUT,
        )
    err_console.print(f"[dim]universe {universe}: {len(found)} symbols ({', '.join(found)})[/]")
    return found


def _run(
    ctx: typer.Context,
    spec: EvalSpec,
    out: Path | None,
    *,
    cluster: RayCluster | None = None,
    workers: int | None = None,
    fresh: bool = False,
) -> Evaluation:
    import asyncio

    from alphadesk.data import DataError
    from alphadesk.llm.base import CacheMiss
    from alphadesk.pipelines.evaluation import EvaluationError, LookAheadError, evaluate

    settings = settings_from(ctx)
    with DecisionBar() as progress:  # on stderr: --json output stays pure
        try:
            return asyncio.run(
                evaluate(
                    settings,
                    spec,
                    out=out,
                    on_start=progress.start,
                    on_decision=progress.record,
                    cluster=cluster,
                    workers=workers,
                    fresh=fresh,
                    on_resume=progress.skip,
                )
            )
        except (EvaluationError, DataError) as exc:
            raise fail(str(exc), "see `alphadesk eval --help`", BAD_INPUT) from None
        except LookAheadError as exc:
            raise fail(f"the evaluation is void: {exc}") from None
        except CacheMiss as exc:
            raise fail(
                str(exc), "delete the evaluation's manifest.json to record the answers again"
            ) from None


SHOWN_SYMBOLS = 5  # beyond this many symbols the terminal shows the pooled rows only


def _print(result: Evaluation) -> None:
    from alphadesk.pipelines.evaluation.files import POOLED

    spec, rows = result.spec, result.rows
    title = (
        f"{spec.desk} ({spec.model}) on {_named(spec.symbols)}, {spec.start} to "
        f"{spec.end}, every {spec.every} sessions"
    )
    if len(spec.symbols) > SHOWN_SYMBOLS:
        rows = [r for r in rows if r["symbol"] == POOLED]
        title += " (pooled; every symbol's rows are in table.md)"
    console.print(_main_table(rows, title))
    console.print(_interval_table(rows))
    mixes = [r for r in result.rows if r.get("buy_share") is not None]
    if mixes:
        console.print(_mix_table(mixes))
    failed = [d for d in result.decisions if d.decision == "failed"]
    if failed:
        err_console.print(
            f"[yellow]{len(failed)} of {len(result.decisions)} decisions failed "
            f"(positions held); the first: {failed[0].symbol} {failed[0].as_of.date()}: "
            f"{failed[0].reason}[/]\n[dim]every reason is in decisions.csv; a rerun asks the "
            "model again for these (the recorded answers replay)[/]"
        )
    manifest = result.manifest
    err_console.print(
        f"[dim]cache {manifest['cache_mode']}: {manifest['live_model_calls']} live model calls "
        f"of {manifest['model_calls']}; {manifest['wall_seconds']:.1f}s; files in "
        f"{result.folder}[/]"
    )


def _named(symbols: list[str]) -> str:
    if len(symbols) <= SHOWN_SYMBOLS:
        return ", ".join(symbols)
    return f"{len(symbols)} symbols ({', '.join(symbols[:3])} ... {symbols[-1]})"


def _sections(rows: list[dict[str, Any]], i: int) -> bool:
    return i + 1 < len(rows) and rows[i + 1]["symbol"] != rows[i]["symbol"]


def _main_table(rows: list[dict[str, Any]], title: str) -> FitTable:
    from alphadesk.pipelines.evaluation.files import COLUMNS, DESK_ROWS, cells

    # model calls and their cost in one column; every figure is a value, never cut
    headers = COLUMNS[:-1]
    table = FitTable(*headers[:2], *(Column(h, right=True) for h in headers[2:]), title=title)
    for i, row in enumerate(rows):
        shown: list[Cell] = list(cells(row))
        ours = row["strategy"] in DESK_ROWS
        if ours:
            shown[0] = Text(row["strategy"], style="bold")
        calls = f"{shown[-2]} (${row['model_cost_usd']:.4f})" if ours else "-"
        table.add_row(*shown[:-2], calls, end_section=_sections(rows, i))
    return table


def _interval_table(rows: list[dict[str, Any]]) -> FitTable:
    from alphadesk.pipelines.evaluation.files import INTERVAL_COLUMNS, interval_cells
    from alphadesk.pipelines.evaluation.statistics import METHOD

    headers = INTERVAL_COLUMNS
    table = FitTable(
        *headers[:2], *(Column(h, right=True) for h in headers[2:]), title=METHOD["intervals"]
    )
    for i, row in enumerate(rows):
        table.add_row(*interval_cells(row), end_section=_sections(rows, i))
    return table


def _mix_table(rows: list[dict[str, Any]]) -> FitTable:
    from alphadesk.pipelines.evaluation.files import MIX_COLUMNS, mix_cells
    from alphadesk.pipelines.evaluation.statistics import METHOD

    table = FitTable(
        MIX_COLUMNS[0],
        *(Column(h, right=True) for h in MIX_COLUMNS[1:4]),
        MIX_COLUMNS[4],
        title=f"Decision mix; trend rule: {METHOD['trend_rule']}",
    )
    for row in rows:
        shown: list[Cell] = list(mix_cells(row))
        if shown[-1]:
            shown[-1] = Text(str(shown[-1]), style="bold yellow")
        table.add_row(*shown)
    return table

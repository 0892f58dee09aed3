"""``alphadesk backtest``: a built-in strategy, or a strategy file run in the sandbox, on one
symbol's daily bars, with its metrics."""

from __future__ import annotations

import json
import math
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import typer

from alphadesk.cli.common import BAD_INPUT, close_of, console, err_console, fail, settings_from
from alphadesk.cli.tables import Column, FitTable

if TYPE_CHECKING:
    from alphadesk.analytics.overfitting import DeflatedSharpe
    from alphadesk.backtest.models import BacktestResult
    from alphadesk.backtest.service import BacktestOutcome, BacktestRequest

__all__ = ["backtest"]


def _day(value: str | None, option: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise fail(
            f"{option} {value!r} is not a date", "use YYYY-MM-DD, e.g. 2005-01-01", BAD_INPUT
        ) from None


def _params(pairs: list[str]) -> dict[str, str]:
    params: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise fail(f"--param {pair!r} is not NAME=VALUE", "e.g. --param fast=10", BAD_INPUT)
        params[key.strip()] = value.strip()
    return params


def backtest(
    ctx: typer.Context,
    strategy: str = typer.Argument(
        ...,
        metavar="STRATEGY",
        help="A built-in strategy (buy_hold, sma_cross, macd, kdj_rsi, zmr) or a Python file "
        "defining one backtrader Strategy, run in the sandbox.",
    ),
    symbol: str = typer.Argument(..., metavar="SYMBOL", help="The symbol to trade, e.g. AAPL."),
    start: str | None = typer.Option(
        None,
        "--from",
        metavar="DATE",
        help="First day to trade (YYYY-MM-DD). Default: the first bar.",
    ),
    end: str | None = typer.Option(
        None,
        "--to",
        metavar="DATE",
        help="Last day (YYYY-MM-DD), bars closed by then. Default: now.",
    ),
    engine: Literal["fast", "backtrader"] = typer.Option(
        "fast",
        help="The vectorised path, or Backtrader itself (the reference). "
        "Strategy files always run on Backtrader.",
    ),
    cash: float = typer.Option(100_000.0, help="Starting cash."),
    commission: float = typer.Option(
        0.001, help="Commission per fill: a fraction of value (0.001 = 0.1%), see --per-share."
    ),
    per_share: bool = typer.Option(
        False, "--per-share", help="Read --commission as currency per share."
    ),
    slippage: float = typer.Option(0.0005, help="Slippage per fill, a fraction of the price."),
    fraction: float = typer.Option(0.95, help="Share of equity per position (1 = all-in)."),
    long_short: bool = typer.Option(
        False, "--long-short", help="Go short on a sell signal (default: flat)."
    ),
    param: list[str] = typer.Option(
        [],
        "--param",
        "-p",
        metavar="NAME=VALUE",
        help="Strategy parameter NAME=VALUE (repeatable).",
    ),
    trades: int = typer.Option(10, "--trades", min=0, help="How many of the last trades to list."),
    chart: Path | None = typer.Option(
        None,
        "--chart",
        metavar="FOLDER",
        file_okay=False,
        help="Folder for equity and drawdown PNGs.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    trials: int | None = typer.Option(
        None,
        "--trials",
        metavar="N",
        min=1,
        help="How many variants were tried to find this one: prints its deflated Sharpe "
        "ratio, the probability that its true Sharpe beats the best of N lucky trials.",
    ),
    trials_sharpe_std: float | None = typer.Option(
        None,
        "--trials-sharpe-std",
        metavar="SD",
        min=0.0,
        help="With --trials: the annualised standard deviation of the trials' Sharpe "
        "ratios. Default: that of skill-less trials as long as this run.",
    ),
    time_limit: float = typer.Option(
        120.0,
        "--time-limit",
        metavar="SECONDS",
        min=1.0,
        help="Wall-clock limit of a strategy file's sandboxed run.",
    ),
) -> None:
    """Backtest a strategy on daily bars: next-open fills, costs, whole shares.

    Indicators warm up on the bars before --from; orders fill at the next bar's open.
    A strategy FILE (a backtrader Strategy subclass) is checked, then run on Backtrader
    in a sandbox: no network, no files outside its own, CPU, memory and time limits.
    """
    code = _strategy_file(strategy)
    if trials_sharpe_std is not None and trials is None:
        raise fail("--trials-sharpe-std needs --trials", "add --trials N", BAD_INPUT)
    first, last = _day(start, "--from"), _day(end, "--to")
    if first and last and first > last:
        raise fail(f"--from {first} is after --to {last}", "swap the dates", BAD_INPUT)
    if last is not None:
        close_of(last, "--to")  # a day whose close has not come yet is refused here
    request = _request(
        symbol,
        Path(strategy).stem if code is not None else strategy,
        code,
        _params(param),
        first,
        last,
        engine,
        cash=cash,
        commission=commission,
        commission_type="per_share" if per_share else "percent",
        slippage=slippage,
        fraction=fraction,
        long_short=long_short,
        time_limit_s=time_limit,
    )
    outcome = _run(ctx, request)
    result = outcome.result
    if chart is not None:
        from alphadesk.backtest.charts import save_charts

        for path in save_charts(result, chart):
            err_console.print(f"[dim]chart: {path}[/]")
    deflated = None if trials is None else _deflated(result, trials, trials_sharpe_std)
    if as_json:
        _print_json(outcome, deflated)
        return
    _print(result, outcome.benchmark, trades)
    if deflated is not None:
        _print_deflated(deflated, result.config.periods_per_year)
    console.print(f"[dim]recorded as run {outcome.run_id}[/]")


def _request(
    symbol: str,
    strategy: str,
    code: str | None,
    params: dict[str, str],
    first: date | None,
    last: date | None,
    engine: str,
    **settings: Any,
) -> BacktestRequest:
    from pydantic import ValidationError

    from alphadesk.backtest.service import BacktestRequest

    try:
        return BacktestRequest(
            symbol=symbol, strategy=strategy, code=code, params=params, start=first, end=last,
            engine=engine, **settings,
        )  # fmt: skip
    except ValidationError as exc:
        problem = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise fail(problem, "see `alphadesk backtest --help`", BAD_INPUT) from None


def _run(ctx: typer.Context, request: BacktestRequest) -> BacktestOutcome:
    """The one backtest (recorded as a run); a failure exits 2 with what to do."""
    import asyncio

    from rich.markup import escape

    from alphadesk.backtest.service import BacktestError, run_backtest
    from alphadesk.data import build_provider

    settings = settings_from(ctx)
    market = build_provider(settings)
    what = "running the strategy in the sandbox" if request.code else "backtesting"
    try:
        with err_console.status(what):
            return asyncio.run(run_backtest(settings, market, request))
    except BacktestError as exc:
        if exc.status == "crashed" and exc.log:
            err_console.print(escape(exc.log), style="dim")
        recorded = f" (recorded as run {exc.run_id})" if exc.run_id else ""
        raise fail(f"{escape(str(exc))}{recorded}", exc.hint, BAD_INPUT) from None


def _strategy_file(strategy: str) -> str | None:
    """The code of a strategy file, or ``None`` for a built-in name."""
    if not (strategy.endswith(".py") or "/" in strategy or "\\" in strategy):
        return None
    try:
        return Path(strategy).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(
            f"cannot read strategy file {strategy}: {exc}", "check the path", BAD_INPUT
        ) from None


def _deflated(result: BacktestResult, trials: int, sharpe_std: float | None) -> DeflatedSharpe:
    """The deflated Sharpe ratio of the run's daily returns as the best of ``trials``."""
    from alphadesk.analytics.errors import AnalyticsError
    from alphadesk.analytics.overfitting import deflated_sharpe_ratio
    from alphadesk.analytics.performance import returns_from_equity

    per_year = result.config.periods_per_year
    variance = None if sharpe_std is None else sharpe_std**2 / per_year
    try:
        return deflated_sharpe_ratio(returns_from_equity(result.equity), trials, variance)
    except AnalyticsError as exc:
        raise fail(
            f"no deflated Sharpe ratio: {exc}", "widen --from/--to or drop --trials", BAD_INPUT
        ) from None


def _print_json(outcome: BacktestOutcome, deflated: DeflatedSharpe | None) -> None:
    out = {"run_id": outcome.run_id, **outcome.result.to_dict()}
    if deflated is not None:
        out["deflated_sharpe"] = _deflated_dict(deflated, outcome.result.config.periods_per_year)
    typer.echo(json.dumps(out, indent=2, default=str))


def _deflated_dict(deflated: DeflatedSharpe, periods_per_year: float) -> dict[str, float]:
    sharpe, benchmark = deflated.annualised(periods_per_year)
    return {
        "probability": deflated.probability,
        "trials": deflated.trials,
        "sharpe": sharpe,
        "benchmark_sharpe": benchmark,
        "trials_sharpe_std": math.sqrt(deflated.sharpe_variance * periods_per_year),
        "returns": deflated.observations,
        "skew": deflated.skew,
        "kurtosis": deflated.kurtosis,
    }


def _print_deflated(deflated: DeflatedSharpe, periods_per_year: float) -> None:
    figures = _deflated_dict(deflated, periods_per_year)
    console.print(
        f"[bold]deflated Sharpe ratio {figures['probability']:.1%}[/]: the probability that "
        f"the true Sharpe beats {figures['benchmark_sharpe']:.2f}, the best of "
        f"{deflated.trials:,} skill-less trials by chance (trials' Sharpe sd "
        f"{figures['trials_sharpe_std']:.2f}); Sharpe {figures['sharpe']:.2f} over "
        f"{deflated.observations:,} returns, skew {deflated.skew:.2f}, kurtosis "
        f"{deflated.kurtosis:.1f}"
    )


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.2%}"


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _rows(result: BacktestResult) -> dict[str, str]:
    m = result.metrics()
    return {
        "final value": _num(m.final),
        "cumulative return": _pct(m.cumulative_return),
        "annualised return": _pct(m.annualized_return),
        "volatility": _pct(m.volatility),
        "Sharpe": _num(m.sharpe),
        "max drawdown": _pct(m.max_drawdown),
        "trades (closed)": str(m.trades),
        "win rate": _pct(m.win_rate),
        "exposure": _pct(m.exposure),
        "turnover / year": _num(m.turnover),
        "commission": _num(m.commission),
        "slippage": _num(m.slippage),
        "orders refused (cash)": str(result.rejected),
    }


def _print(result: BacktestResult, benchmark: BacktestResult | None, last_trades: int) -> None:
    spec = result.strategy or {}
    params = ", ".join(f"{k}={v}" for k, v in spec.get("params", {}).items())
    start, end = result.equity.index[0].date(), result.equity.index[-1].date()
    console.print(
        f"[bold]{result.symbol} {spec.get('name')}({params})[/] {start} to {end}, "
        f"{len(result.equity)} bars, {result.engine} engine"
    )
    table = FitTable(
        "metric",
        Column(spec.get("name", "strategy"), right=True),
        *([Column("buy & hold", right=True)] if benchmark is not None else []),
    )
    ours = _rows(result)
    theirs = _rows(benchmark) if benchmark is not None else {}
    for key, value in ours.items():
        table.add_row(key, value, *([theirs[key]] if benchmark is not None else []))
    console.print(table)
    shown = result.trades[-last_trades:] if last_trades else []
    if shown:
        numbers = (Column(h, right=True) for h in ("shares", "in", "out", "net P&L", "bars"))
        listing = FitTable(
            "entry",
            "exit",
            *numbers,
            title=f"last {len(shown)} of {len(result.trades)} trades (shares < 0: short)",
        )
        for t in shown:
            listing.add_row(
                str(t.entry_time.date()),
                str(t.exit_time.date()) if t.exit_time is not None else "open",
                str(t.size),
                f"{t.entry_price:.2f}",
                f"{t.exit_price:.2f}" if t.exit_price is not None else "-",
                f"{t.pnl_net:,.2f}",
                str(t.bars),
            )
        console.print(listing)
    config = result.config
    costs = config.costs
    unit = "/share" if costs.commission_type == "per_share" else " of value"
    console.print(
        f"[dim]cash {config.cash:,.0f}; commission {costs.commission:g}{unit}; slippage "
        f"{costs.slippage:.2%}; {config.sizing.fraction:.0%} of equity per position; "
        f"{'long/short' if config.long_short else 'long/flat'}; fills at the next open[/]"
    )
    for note in result.notes:
        console.print(f"[dim]note: {note}[/]")

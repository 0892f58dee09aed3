"""``backtest`` as an MCP tool: what ``alphadesk backtest`` does, for a client.

A built-in strategy by name, or a strategy's code sent with the call (never a path: the
server reads no file a client names), checked and run only in the sandbox as the CLI runs
a strategy file. The backtest is recorded as a run of kind ``backtest``: its report, its
result and its equity and drawdown charts, readable as the run's resources. A call cancelled
by its client or stopped at the server's time limit kills the sandboxed code at once (not at
its own limit) and is recorded interrupted."""

from __future__ import annotations

import asyncio
import threading
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.data.errors import DataError
from alphadesk.data.symbols import InvalidSymbol, normalize_symbol
from alphadesk.mcp_server.calls import Progress, instant
from alphadesk.mcp_server.guards import CallError
from alphadesk.store.runs import RunStore

__all__ = ["BacktestArgs", "BacktestOutcome", "run_backtest"]

_LAST_TRADES = 10


class BacktestArgs(BaseModel):
    """A backtest, as ``alphadesk backtest`` takes it."""

    model_config = ConfigDict(extra="forbid")

    symbol: str = Field(min_length=1, max_length=24, description="The symbol to trade.")
    strategy: str | None = Field(
        None,
        max_length=40,
        description="A built-in strategy: buy_hold, sma_cross (the default), macd, kdj_rsi or "
        "zmr; with code, the strategy's name in the result (default: its class's name).",
    )
    code: str | None = Field(
        None,
        max_length=50_000,
        description="Python source defining one backtrader Strategy subclass, run in the "
        "sandbox (no network, no files, CPU, memory and time limits) instead of a built-in.",
    )
    params: dict[str, str | int | float] = Field(
        default_factory=dict, description='Strategy parameters, e.g. {"fast": 10}.'
    )
    start: date | None = Field(None, description="First day to trade. Default: the first bar.")
    end: date | None = Field(
        None, description="Last day, bars closed by then. Default: the last close the data covers."
    )
    engine: Literal["fast", "backtrader"] = Field(
        "fast", description="The vectorised engine or Backtrader itself (code always runs there)."
    )
    cash: float = Field(100_000.0, gt=0, le=1e12, description="Starting cash.")
    commission: float = Field(0.001, ge=0, le=1.0, description="Per fill: a fraction of value.")
    slippage: float = Field(0.0005, ge=0, le=0.1, description="Per fill, a fraction of price.")
    fraction: float = Field(0.95, gt=0, le=1.0, description="Share of equity per position.")
    long_short: bool = Field(False, description="Go short on a sell signal (default: flat).")
    time_limit_s: float = Field(
        120.0, ge=1, le=600, description="Wall-clock limit of the code's sandboxed run."
    )

    @property
    def built_in(self) -> str:
        """The built-in strategy to run (without code)."""
        return self.strategy or "sma_cross"


class BacktestOutcome(BaseModel):
    """A finished backtest: its metrics beside buy and hold on the same bars."""

    run_id: str
    symbol: str
    strategy: str
    params: dict[str, Any]
    engine: str
    start: str
    end: str
    bars: int
    metrics: dict[str, Any] = Field(description="Returns, Sharpe, drawdown, trades, costs...")
    buy_and_hold: dict[str, Any] | None = Field(description="The same metrics for buy and hold.")
    trades: int = Field(description="Round trips (the last may be open).")
    last_trades: list[dict[str, Any]]
    rejected_orders: int
    notes: list[str]


def _config(args: BacktestArgs) -> Any:
    from alphadesk.backtest import BacktestConfig, Costs, Sizing

    try:
        return BacktestConfig(
            cash=args.cash,
            costs=Costs(args.commission, "percent", args.slippage),
            sizing=Sizing("fraction", fraction=args.fraction),
            long_short=args.long_short,
        )
    except ValueError as exc:
        raise CallError(f"backtest: {exc}") from None


def _checked(args: BacktestArgs) -> dict[str, Any]:
    """The strategy's parameters: a built-in's, cast to their types; code's, as text
    (after the static check, which refuses what the sandbox would never run)."""
    from alphadesk.backtest import UnknownStrategy, check_strategy_code, get_strategy

    if args.code is not None:
        check = check_strategy_code(args.code)
        if not check.ok:
            raise CallError(
                f"the strategy code was refused by the static check: {check.summary()}; "
                "define one backtrader Strategy subclass and read bars from self.data"
            )
        return {k: str(v) for k, v in args.params.items()}
    try:
        return get_strategy(args.built_in).params(args.params)
    except (UnknownStrategy, ValueError) as exc:
        raise CallError(f"backtest: {exc}") from None


def _frame(market: MarketData, args: BacktestArgs) -> tuple[str, datetime, Any, list[str]]:
    """The symbol, the instant and every bar known at it (those before ``start`` warm the
    indicators up), as the CLI loads them."""
    from alphadesk.backtest import BacktestDataError, frame_from_bars

    try:
        symbol = normalize_symbol(args.symbol)
        at, _ = instant(market, args.end, [symbol])
        frame, notes = frame_from_bars(market.daily_bars(symbol, at))
    except (DataError, InvalidSymbol, BacktestDataError) as exc:
        raise CallError(f"backtest: {exc}") from None
    last = frame.index[-1].date()
    if args.start is not None and last < args.start:
        raise CallError(f"{symbol} has no bars from {args.start} (its data ends {last})")
    if args.start is not None and args.end is not None and args.start > args.end:
        raise CallError(f"start {args.start} is after end {args.end}; swap the dates")
    if args.start is not None and frame.index[0].date() > args.start:
        notes.append(f"{symbol}'s data starts {frame.index[0].date()}, after start {args.start}")
    return symbol, at, frame, notes


def _run(
    args: BacktestArgs,
    params: dict[str, Any],
    symbol: str,
    frame: Any,
    notes: list[str],
    stop: threading.Event,
) -> tuple[Any, Any]:
    """The backtest and buy and hold on the same bars (None when it is buy and hold);
    setting ``stop`` kills strategy code's sandbox."""
    from alphadesk.backtest import Limits, run_in_sandbox, run_strategy

    config = _config(args)

    def built_in(name: str, chosen: dict[str, Any], engine: Any) -> Any:
        return run_strategy(name, frame, chosen, config, engine=engine,
                            trade_from=args.start, symbol=symbol, notes=notes)  # fmt: skip

    try:
        benchmark = built_in("buy_hold", {}, "fast")
        if args.code is None:
            result = built_in(args.built_in, params, args.engine)
            return result, None if args.built_in == "buy_hold" else benchmark
    except ValueError as exc:
        raise CallError(f"backtest: {exc}; widen the dates or change params") from None
    limits = Limits(wall_seconds=args.time_limit_s, cpu_seconds=max(1, int(args.time_limit_s)))
    outcome = run_in_sandbox(
        args.code, frame, config, limits, params=params, trade_from=args.start, symbol=symbol,
        name=args.strategy, notes=[*notes, "strategy code run on Backtrader in the sandbox"],
        cancel=stop,
    )  # fmt: skip
    if not outcome.ok:
        log = f"; its output ends: {outcome.log[-600:]}" if outcome.log else ""
        raise CallError(f"backtest {outcome.status}: {outcome.reason}{log}")
    return outcome.result, benchmark


def _outcome(run_id: str, result: Any, benchmark: Any) -> BacktestOutcome:
    summary = result.to_dict()
    spec = result.strategy or {}
    return BacktestOutcome(
        run_id=run_id,
        symbol=result.symbol or "",
        strategy=spec.get("name", ""),
        params=spec.get("params", {}),
        engine=result.engine,
        start=summary["start"],
        end=summary["end"],
        bars=len(result.equity),
        metrics=summary["metrics"],
        buy_and_hold=None if benchmark is None else benchmark.to_dict()["metrics"],
        trades=len(result.trades),
        last_trades=summary["trades"][-_LAST_TRADES:],
        rejected_orders=result.rejected,
        notes=result.notes,
    )


def _report(outcome: BacktestOutcome) -> str:
    params = ", ".join(f"{k}={v}" for k, v in outcome.params.items())
    theirs = outcome.buy_and_hold or {}
    lines = [
        f"# Backtest: {outcome.strategy}({params}) on {outcome.symbol}",
        "",
        f"{outcome.start[:10]} to {outcome.end[:10]}, {outcome.bars} bars, {outcome.engine} "
        "engine; orders fill at the next open.",
        "",
        "| metric | strategy | buy & hold |",
        "|---|---:|---:|",
    ]
    for key, value in outcome.metrics.items():
        lines.append(f"| {key} | {_shown(value)} | {_shown(theirs.get(key))} |")
    lines += ["", *(f"- {note}" for note in outcome.notes)]
    return "\n".join(lines) + "\n"


def _shown(value: Any) -> str:
    return "-" if value is None else f"{value:,.4g}" if isinstance(value, float) else str(value)


def _save(
    store: RunStore, run_id: str, folder: Path, result: Any, outcome: BacktestOutcome
) -> None:
    from alphadesk.backtest.charts import save_charts

    (folder / "report.md").write_text(_report(outcome), encoding="utf-8")
    (folder / "result.json").write_text(outcome.model_dump_json(indent=2), encoding="utf-8")
    store.add_artifact(run_id, "report.md", folder / "report.md", "text/markdown")
    store.add_artifact(run_id, "result.json", folder / "result.json", "application/json")
    for path in save_charts(result, folder):
        store.add_artifact(run_id, path.name, path, "image/png")


async def run_backtest(
    settings: Settings, market: MarketData, args: BacktestArgs, sink: Progress
) -> BacktestOutcome:
    """Run and record the backtest ``args`` asks for; a mistake the client can fix raises
    :class:`CallError` before anything is recorded."""
    params = _checked(args)
    symbol, at, frame, notes = await asyncio.to_thread(_frame, market, args)
    sink(f"loaded {len(frame)} bars of {symbol} to {frame.index[-1].date()}")
    store = RunStore(settings.store_path)
    name = args.built_in if args.code is None else f"{args.strategy or 'strategy'} (code)"
    run_id = store.start(kind="backtest", title=f"backtest {name} {symbol}",
                         request=args.model_dump(mode="json"), as_of=at)  # fmt: skip
    stop = threading.Event()
    try:
        sink(f"backtesting {name} on the {'sandbox' if args.code else args.engine} engine")
        work = (args, params, symbol, frame, notes, stop)
        result, benchmark = await asyncio.to_thread(_run, *work)
        outcome = _outcome(run_id, result, benchmark)
        folder = settings.runs_dir / run_id
        folder.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(_save, store, run_id, folder, result, outcome)
        sink("drew the equity and drawdown charts")
    except CallError as exc:
        store.finish(run_id, status="failed", error=str(exc))
        raise
    except BaseException as exc:  # cancelled by the client, or past the call's time limit
        stop.set()  # the thread cannot be cancelled: the sandbox it waits on is killed
        store.finish(run_id, status="interrupted", error=repr(exc))
        raise
    store.finish(run_id, status="completed", result=outcome)
    return outcome

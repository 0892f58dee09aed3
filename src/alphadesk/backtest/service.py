"""The one backtest every door runs: a typed request in, a recorded run and its figures out.

The CLI (``alphadesk backtest``), the MCP server's ``backtest`` tool and the strategy lab
call this module; they only parse their input into a :class:`BacktestRequest` and render
the :class:`BacktestOutcome`. :func:`run_backtest` checks the request, loads the symbol's
bars known at the end's close (the bars before the start warm the indicators up), runs a
built-in strategy on its engine or strategy code in the sandbox (:func:`backtest_bars`,
the part the lab calls on its own periods), and records a run of kind ``backtest``: its
request, its :class:`BacktestSummary`, a report and the equity and drawdown charts.

A mistake the caller can fix raises :class:`BacktestError` before anything is recorded;
a run that fails once started is recorded ``failed`` (then the error is raised, naming the
run); one cancelled or stopped by its caller kills its sandbox at once and is recorded
``interrupted``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.store.runs import RunStore

from .frame import BacktestDataError
from .models import BacktestConfig, BacktestResult, Costs, Sizing

__all__ = [
    "BacktestError",
    "BacktestOutcome",
    "BacktestRequest",
    "BacktestSummary",
    "backtest_bars",
    "run_backtest",
]

_LAST_TRADES = 10
_CODE_NOTE = "strategy code run on Backtrader in the sandbox"


class BacktestError(ValueError):
    """A backtest that cannot run or did not finish; says why and what to do.

    Attributes:
        hint: How to fix it.
        status: How a sandboxed run ended (``rejected``, ``killed``, ``crashed``,
            ``sandbox_unavailable``), or ``invalid`` for a request that cannot run.
        log: The tail of what strategy code printed, when it ran.
        reason: Why, without the status.
        run_id: The run it was recorded as, when it failed after it started.
    """

    def __init__(
        self,
        message: str,
        hint: str,
        *,
        status: str = "invalid",
        log: str = "",
        reason: str | None = None,
        run_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.hint, self.status, self.log, self.run_id = hint, status, log, run_id
        self.reason = reason or message


class BacktestRequest(BaseModel):
    """A backtest, whichever door it came in by."""

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
    cash: float = Field(100_000.0, description="Starting cash.")
    commission: float = Field(
        0.001, description="Per fill: a fraction of value, or currency per share (commission_type)."
    )
    commission_type: Literal["percent", "per_share"] = Field(
        "percent", description="How to read commission: of the traded value, or per share."
    )
    slippage: float = Field(0.0005, description="Per fill, a fraction of price.")
    fraction: float = Field(0.95, description="Share of equity per position.")
    long_short: bool = Field(False, description="Go short on a sell signal (default: flat).")
    time_limit_s: float = Field(
        120.0, ge=1, description="Wall-clock limit of the code's sandboxed run."
    )

    @property
    def built_in(self) -> str:
        """The built-in strategy to run (without code)."""
        return self.strategy or "sma_cross"

    @property
    def name(self) -> str:
        """What the run is called: the built-in's name, or the code's label."""
        return self.built_in if self.code is None else f"{self.strategy or 'strategy'} (code)"

    def config(self) -> BacktestConfig:
        """Cash, costs, sizing and long/short of the run.

        Raises:
            BacktestError: A value out of range.
        """
        try:
            return BacktestConfig(
                cash=self.cash,
                costs=Costs(self.commission, self.commission_type, self.slippage),
                sizing=Sizing("fraction", fraction=self.fraction),
                long_short=self.long_short,
            )
        except ValueError as exc:
            raise BacktestError(str(exc), "change the value the message names") from None


class BacktestSummary(BaseModel):
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


@dataclass(frozen=True)
class BacktestOutcome:
    """A recorded backtest.

    Attributes:
        run_id: The run it is recorded as.
        result: The backtest.
        benchmark: Buy and hold on the same bars (``None`` when the strategy is buy and hold).
        as_of: The close its bars end at.
        summary: What was recorded as the run's result.
    """

    run_id: str
    result: BacktestResult
    benchmark: BacktestResult | None
    as_of: datetime
    summary: BacktestSummary


Progress = Callable[[str], None]


def _params(request: BacktestRequest) -> dict[str, Any]:
    """A built-in's parameters cast to their types; code's, as text once the static check
    (which refuses what the sandbox would never run) passed."""
    from .checks import ALLOWED_MODULES, check_strategy_code
    from .strategies import UnknownStrategy, get_strategy

    if request.code is not None:
        check = check_strategy_code(request.code)
        if not check.ok:
            allowed = ", ".join(sorted(ALLOWED_MODULES - {"__future__"}))
            raise BacktestError(
                f"the strategy code was refused by the static check:\n{check.summary()}",
                f"define one backtrader Strategy subclass, import only {allowed}, and read "
                "bars from self.data",
                status="rejected",
            )
        return {k: str(v) for k, v in request.params.items()}
    try:
        return get_strategy(request.built_in).params(request.params)
    except (UnknownStrategy, ValueError) as exc:
        raise BacktestError(str(exc), "see the strategies and their parameters") from None


def _bars(
    market: MarketData, request: BacktestRequest
) -> tuple[str, datetime, pd.DataFrame, list[str]]:
    """The symbol, the close the run is as of, and every bar known then."""
    from alphadesk.data.calendar import close_on_or_before
    from alphadesk.data.current import resolve_as_of
    from alphadesk.data.errors import DataError
    from alphadesk.data.symbols import InvalidSymbol, normalize_symbol

    from .frame import frame_from_bars

    hint = "`alphadesk data list` shows the symbols and their ranges"
    if request.start and request.end and request.start > request.end:
        raise BacktestError(f"start {request.start} is after end {request.end}", "swap the dates")
    try:
        symbol = normalize_symbol(request.symbol)
        if request.end is not None:
            at = close_on_or_before(request.end)
        else:  # now, or the last close the data covers when no provider is current
            at, _ = resolve_as_of(market, None, [symbol], datetime.now(UTC))
        frame, notes = frame_from_bars(market.daily_bars(symbol, at))
    except (DataError, InvalidSymbol, BacktestDataError, ValueError) as exc:
        raise BacktestError(str(exc), hint) from None
    first, last = frame.index[0].date(), frame.index[-1].date()
    if request.start is not None and last < request.start:
        raise BacktestError(
            f"{symbol} has no bars from {request.start} to {request.end or 'now'} (its data "
            f"ends {last})",
            hint,
        )
    if request.start is not None and first > request.start:
        notes.append(f"{symbol}'s data starts {first}, after the start asked for, {request.start}")
    return symbol, at, frame, notes


def backtest_bars(
    frame: pd.DataFrame,
    config: BacktestConfig,
    *,
    strategy: str = "sma_cross",
    code: str | None = None,
    params: Mapping[str, Any] | None = None,
    engine: Literal["fast", "backtrader"] = "fast",
    trade_from: date | datetime | None = None,
    time_limit_s: float = 120.0,
    symbol: str | None = None,
    name: str | None = None,
    notes: list[str] | None = None,
    cancel: threading.Event | None = None,
) -> BacktestResult:
    """Backtest a strategy on ``frame`` from ``trade_from``: the built-in ``strategy`` on
    ``engine``, or ``code`` in the sandbox, never elsewhere. Nothing is loaded or recorded.

    Args:
        frame: The bars (those before ``trade_from`` warm the indicators up).
        config: Cash, costs, sizing, long/short.
        strategy: A built-in strategy, when there is no ``code``.
        code: Strategy code (a backtrader Strategy subclass), run in the sandbox.
        params: The strategy's parameters (code's as text).
        engine: The built-in's engine (code always runs on Backtrader).
        trade_from: First day to trade.
        time_limit_s: Wall-clock limit of the code's sandboxed run.
        symbol: Recorded in the result.
        name: The code's strategy name in the result (default: its class's name).
        notes: Recorded in the result.
        cancel: Set from another thread to kill a sandboxed run at once.

    Raises:
        BacktestError: Bad parameters, too few bars, or code that did not complete (its
            ``status`` says how it ended).
        SandboxCancelled: ``cancel`` was set.
    """
    from .run import run_strategy
    from .sandbox import Limits, run_in_sandbox

    notes = list(notes or [])
    if code is None:
        try:
            return run_strategy(
                strategy, frame, params, config, engine=engine, trade_from=trade_from,
                symbol=symbol, notes=notes,
            )  # fmt: skip
        except ValueError as exc:
            raise BacktestError(str(exc), "widen the dates or change the parameters") from None
    limits = Limits(wall_seconds=time_limit_s, cpu_seconds=max(1, int(time_limit_s)))
    try:
        outcome = run_in_sandbox(
            code, frame, config, limits, params={k: str(v) for k, v in (params or {}).items()},
            trade_from=trade_from, symbol=symbol, name=name, notes=[*notes, _CODE_NOTE],
            cancel=cancel,
        )  # fmt: skip
    except BacktestDataError as exc:
        raise BacktestError(str(exc), "widen the dates") from None
    if outcome.ok and outcome.result is not None:
        return outcome.result
    raise BacktestError(
        f"{outcome.status}: {outcome.reason}",
        _HINTS.get(outcome.status, ""),
        status=outcome.status,
        log=outcome.log,
        reason=outcome.reason,
    )


_HINTS = {
    "sandbox_unavailable": "strategy code is never run outside the sandbox",
    "killed": "raise the time limit if the strategy is just slow",
    "crashed": "the strategy's output shows what went wrong",
    "rejected": "fix what the check found",
}


def _summary(
    run_id: str, result: BacktestResult, benchmark: BacktestResult | None
) -> BacktestSummary:
    figures = result.to_dict()
    spec = result.strategy or {}
    return BacktestSummary(
        run_id=run_id,
        symbol=result.symbol or "",
        strategy=spec.get("name", ""),
        params=spec.get("params", {}),
        engine=result.engine,
        start=figures["start"],
        end=figures["end"],
        bars=len(result.equity),
        metrics=figures["metrics"],
        buy_and_hold=None if benchmark is None else benchmark.to_dict()["metrics"],
        trades=len(result.trades),
        last_trades=figures["trades"][-_LAST_TRADES:],
        rejected_orders=result.rejected,
        notes=result.notes,
    )


def _report(summary: BacktestSummary) -> str:
    params = ", ".join(f"{k}={v}" for k, v in summary.params.items())
    theirs = summary.buy_and_hold or {}
    lines = [
        f"# Backtest: {summary.strategy}({params}) on {summary.symbol}",
        "",
        f"{summary.start[:10]} to {summary.end[:10]}, {summary.bars} bars, {summary.engine} "
        "engine; orders fill at the next open.",
        "",
        "| metric | strategy | buy & hold |",
        "|---|---:|---:|",
    ]
    for key, value in summary.metrics.items():
        lines.append(f"| {key} | {_shown(value)} | {_shown(theirs.get(key))} |")
    lines += ["", *(f"- {note}" for note in summary.notes)]
    return "\n".join(lines) + "\n"


def _shown(value: Any) -> str:
    return "-" if value is None else f"{value:,.4g}" if isinstance(value, float) else str(value)


def _save(
    store: RunStore, run_id: str, folder: Path, result: BacktestResult, summary: BacktestSummary
) -> None:
    from alphadesk.store.private import private_folder, write_private
    from alphadesk.store.redact import redact_json

    from .charts import save_charts

    # As every recorded run's files: private, and without a key a strategy's text held.
    summary = BacktestSummary.model_validate(redact_json(summary.model_dump(mode="json")))
    private_folder(folder)
    write_private(folder / "report.md", _report(summary))
    write_private(folder / "result.json", summary.model_dump_json(indent=2))
    store.add_artifact(run_id, "report.md", folder / "report.md", "text/markdown")
    store.add_artifact(run_id, "result.json", folder / "result.json", "application/json")
    for path in save_charts(result, folder):
        store.add_artifact(run_id, path.name, path, "image/png")


def _run(
    request: BacktestRequest,
    params: dict[str, Any],
    symbol: str,
    frame: pd.DataFrame,
    notes: list[str],
    cancel: threading.Event,
) -> tuple[BacktestResult, BacktestResult | None]:
    """The backtest and buy and hold on the same bars (``None`` for buy and hold itself)."""
    config = request.config()
    result = backtest_bars(
        frame, config, strategy=request.built_in, code=request.code, params=params,
        engine=request.engine, trade_from=request.start, time_limit_s=request.time_limit_s,
        symbol=symbol, name=request.strategy, notes=notes, cancel=cancel,
    )  # fmt: skip
    if request.code is None and request.built_in == "buy_hold":
        return result, None
    hold = backtest_bars(
        frame, config, strategy="buy_hold", trade_from=request.start, symbol=symbol, notes=notes
    )
    return result, hold


async def run_backtest(
    settings: Settings,
    market: MarketData,
    request: BacktestRequest,
    progress: Progress | None = None,
) -> BacktestOutcome:
    """Check, run and record the backtest ``request`` asks for.

    Args:
        settings: Where runs are recorded.
        market: The data to load the bars from.
        request: What to backtest.
        progress: Told each step in a few words.

    Returns:
        The recorded outcome.

    Raises:
        BacktestError: A mistake the caller can fix (nothing recorded: ``run_id`` is
            ``None``), or a run that failed once started (recorded ``failed``).
        asyncio.CancelledError: The caller cancelled: any sandbox is killed, the run is
            recorded ``interrupted``.
    """
    tell = progress or (lambda _text: None)
    params = _params(request)
    request.config()  # a bad value fails before anything is loaded
    symbol, at, frame, notes = await asyncio.to_thread(_bars, market, request)
    tell(f"loaded {len(frame)} bars of {symbol} to {frame.index[-1].date()}")
    store = RunStore(settings.store_path)
    # Recorded with its parameters as the strategy reads them, whichever door sent them.
    recorded = request.model_copy(update={"params": params}).model_dump(mode="json")
    run_id = store.start(kind="backtest", title=f"backtest {request.name} {symbol}",
                         request=recorded, as_of=at)  # fmt: skip
    stop = threading.Event()
    try:
        where = "sandbox" if request.code else request.engine
        tell(f"backtesting {request.name} on the {where} engine")
        result, benchmark = await asyncio.to_thread(
            _run, request, params, symbol, frame, notes, stop
        )
        summary = _summary(run_id, result, benchmark)
        await asyncio.to_thread(_save, store, run_id, settings.runs_dir / run_id, result, summary)
        tell("drew the equity and drawdown charts")
    except BacktestError as exc:
        store.finish(run_id, status="failed", error=str(exc))
        exc.run_id = run_id
        raise
    except BaseException as exc:  # cancelled by the caller, or past its time limit
        stop.set()  # the thread cannot be cancelled: the sandbox it waits on is killed
        store.finish(run_id, status="interrupted", error=repr(exc))
        raise
    store.finish(run_id, status="completed", result=summary)
    return BacktestOutcome(run_id, result, benchmark, at, summary)

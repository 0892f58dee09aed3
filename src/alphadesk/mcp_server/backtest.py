"""``backtest`` as an MCP tool: the one backtest (:mod:`alphadesk.backtest.service`), the
same run ``alphadesk backtest`` records, for a client.

A built-in strategy by name, or a strategy's code sent with the call (never a path: the
server reads no file a client names), checked and run only in the sandbox. The backtest is
recorded as a run of kind ``backtest``: its report, its result and its equity and drawdown
charts, readable as the run's resources. A call cancelled by its client or stopped at the
server's time limit kills the sandboxed code at once (not at its own limit) and is
recorded interrupted. Here only the bounds a client may ask for are added."""

from __future__ import annotations

from pydantic import Field

from alphadesk.backtest.service import BacktestError, BacktestRequest, BacktestSummary
from alphadesk.backtest.service import run_backtest as backtest
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.mcp_server.calls import Progress
from alphadesk.mcp_server.guards import CallError

__all__ = ["BacktestArgs", "BacktestOutcome", "run_backtest"]

BacktestOutcome = BacktestSummary


class BacktestArgs(BacktestRequest):
    """A backtest, as ``alphadesk backtest`` takes it, within what a client may ask for."""

    code: str | None = Field(
        None,
        max_length=50_000,
        description="Python source defining one backtrader Strategy subclass, run in the "
        "sandbox (no network, no files, CPU, memory and time limits) instead of a built-in.",
    )
    cash: float = Field(100_000.0, gt=0, le=1e12, description="Starting cash.")
    commission: float = Field(
        0.001,
        ge=0,
        le=1.0,
        description="Per fill: a fraction of value, or currency per share (commission_type).",
    )
    slippage: float = Field(0.0005, ge=0, le=0.1, description="Per fill, a fraction of price.")
    fraction: float = Field(0.95, gt=0, le=1.0, description="Share of equity per position.")
    time_limit_s: float = Field(
        120.0, ge=1, le=600, description="Wall-clock limit of the code's sandboxed run."
    )


async def run_backtest(
    settings: Settings, market: MarketData, args: BacktestArgs, sink: Progress
) -> BacktestOutcome:
    """Run and record the backtest ``args`` asks for; a mistake the client can fix raises
    :class:`CallError` before anything is recorded."""
    try:
        outcome = await backtest(settings, market, args, sink)
    except BacktestError as exc:
        output = f"; its output ends: {exc.log[-600:]}" if exc.log else ""
        raise CallError(f"backtest: {exc}; {exc.hint}{output}") from None
    return outcome.summary

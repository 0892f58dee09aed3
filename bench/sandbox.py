"""What the strategy sandbox costs: one strategy file run in-process and in the sandbox.

    .venv/bin/python bench/sandbox.py [--symbol NVDA] [--from 2009-01-01] [--to 2018-12-31]
                                      [--runs 3] [--quick]

The SMA-crossover strategy file of the tests (a Backtrader ``bt.Strategy``) over ten years
of one bundled symbol, 0.1 % commission and 0.05 % slippage: the time of the static check,
of the sandbox probe (once per process), of Backtrader run in this process with every bar
preloaded (how a Backtrader user runs it; the strategy could read later bars), of the same
class run in this process as the sandbox runs it (bars streamed one at a time, indicators
bar by bar, its orders traded by a second broker), and of the full sandboxed run (a new
process: interpreter, pandas and Backtrader imports, a pipe round trip per bar). The final
values must agree. Figures only: nothing here asserts a time.

On the shared two-CPU machine (load average 1.5 to 1.8), NVDA 2009-2018 (2,516 bars):
Backtrader preloaded 151 ms, streamed in-process 746 ms, sandboxed run 1,662-1,673 ms;
the sandboxed run took 1,178 ms when the whole frame went in as a Parquet file (bars
preloaded, a strategy could read later ones): streaming costs about 0.5 s per ten years
of daily bars, and gives the same final value (822,679.00).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import backtrader as bt
import pandas as pd

from alphadesk.backtest import BacktestConfig, Costs, frame_from_bars
from alphadesk.backtest.broker import backtrader_broker
from alphadesk.backtest.checks import check_strategy_code
from alphadesk.backtest.native import result_from_report, run_strategy_class
from alphadesk.backtest.sandbox import find_sandbox, run_in_sandbox
from alphadesk.data.providers.bundled import BundledProvider

STRATEGY = Path(__file__).parents[1] / "tests" / "backtest" / "sma_cross_strategy.py"


def _ms(seconds: list[float]) -> str:
    return f"{statistics.median(seconds) * 1000:,.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--symbol", default="NVDA")
    parser.add_argument("--from", dest="start", default="2009-01-01")
    parser.add_argument("--to", dest="end", default="2018-12-31")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="smallest setting: check that it runs")
    args = parser.parse_args()
    if args.quick:  # explicit options still win
        parser.set_defaults(start="2018-01-01", runs=1)
        args = parser.parse_args()
    end = datetime.combine(date.fromisoformat(args.end), datetime.max.time(), tzinfo=UTC)
    bars = BundledProvider().daily_bars(args.symbol, end).since(date.fromisoformat(args.start))
    frame = frame_from_bars(bars)[0]
    config = BacktestConfig(costs=Costs(0.001, slippage=0.0005))
    code = STRATEGY.read_text()

    started = time.perf_counter()
    find_sandbox()
    probe = time.perf_counter() - started
    checks, preloaded, direct, sandboxed = [], [], [], []
    namespace: dict[str, object] = {}
    exec(compile(code, str(STRATEGY), "exec"), namespace)
    cls: Any = namespace["SmaCross"]
    for _ in range(args.runs):
        started = time.perf_counter()
        check_strategy_code(code)
        checks.append(time.perf_counter() - started)
        started = time.perf_counter()
        value = _preloaded(cls, frame, config)
        preloaded.append(time.perf_counter() - started)
        started = time.perf_counter()
        report = run_strategy_class(cls, frame, config)
        here = result_from_report(report, frame, config)  # its fills replayed on the bars
        direct.append(time.perf_counter() - started)
        started = time.perf_counter()
        outcome = run_in_sandbox(code, frame, config)
        sandboxed.append(time.perf_counter() - started)
        assert outcome.result is not None, outcome.reason
        if abs(outcome.result.final_value - here.final_value) > 1e-6:
            raise SystemExit("the sandboxed run and the in-process run disagree")
        if abs(value - here.final_value) > 1e-6:
            raise SystemExit("the streamed run and Backtrader's preloaded run disagree")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{args.symbol} {len(frame)} bars, SMA cross file, {args.runs} runs (medians)")
    print(f"load average {load} on {os.cpu_count()} CPUs")
    print(f"static check          {_ms(checks)}")
    print(f"sandbox probe (once)  {probe * 1000:,.1f} ms")
    print(f"Backtrader preloaded  {_ms(preloaded)}")
    print(f"streamed in-process   {_ms(direct)}")
    final = here.final_value  # the sandboxed run's, checked above
    print(f"sandboxed run         {_ms(sandboxed)}  (final value {final:,.2f})")


class _Sizer(bt.Sizer):
    """The run's sizing for ``self.buy()`` without a size, as the sandbox sizes it."""

    params = (("config", None),)

    def _getsizing(self, comminfo: object, cash: float, data: object, isbuy: bool) -> int:
        return int(self.p.config.sizing.size(self.broker.getvalue(), data.close[0]))  # type: ignore[attr-defined]


def _preloaded(cls: Any, frame: pd.DataFrame, config: BacktestConfig) -> float:
    """Backtrader's default run: every bar preloaded, indicators computed at once."""
    feed = frame[["open", "high", "low", "close", "volume"]].copy()
    feed.index = feed.index.tz_convert("UTC").tz_localize(None)
    cerebro = bt.Cerebro(stdstats=False, maxcpus=1)
    cerebro.adddata(bt.feeds.PandasData(dataname=feed, openinterest=None))
    cerebro.broker = backtrader_broker(config)
    cerebro.addsizer(_Sizer, config=config)
    cerebro.addstrategy(cls)
    return float(cerebro.run()[0].broker.getvalue())


if __name__ == "__main__":
    main()

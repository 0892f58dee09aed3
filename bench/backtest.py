"""Benchmark of the fast backtest path against Backtrader, on one parameter sweep.

    .venv/bin/python bench/backtest.py [--symbol NVDA] [--from 2009-01-01] [--to 2018-12-31]
                                       [--strategy sma_cross] [--long-short]
                                       [--sets 0] [--quick]

A grid of at least 100 parameter sets of a built-in strategy over ten years of one bundled
symbol, run once by each engine in the same process (signals included in both timings,
0.1 % commission and 0.05 % slippage). Every run's fills, round trips and final value
are compared between the engines; the script prints the timings, the speed-up and the
number of runs that differ (it should be 0). ``--sets N`` runs the grid's first N sets
(0: all of them). Figures only: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

from alphadesk.backtest import BacktestConfig, BacktestResult, Costs, frame_from_bars, run_strategy
from alphadesk.data.providers.bundled import BundledProvider

GRIDS: dict[str, dict[str, list[Any]]] = {
    "sma_cross": {"fast": list(range(5, 55, 5)), "slow": list(range(60, 260, 17))},
    "macd": {"fast": [6, 8, 10, 12, 14, 16], "slow": [20, 26, 32, 40, 50], "signal": [5, 7, 9, 12]},
    "zmr": {
        "window": [10, 15, 20, 30, 40, 60],
        "entry": [1.5, 2.0, 2.5, 3.0],
        "exit": [0.0, 0.25, 0.5, 1.0, 1.25],
    },
    "kdj_rsi": {
        "n": [5, 9, 14, 21],
        "rsi_period": [7, 14, 21],
        "oversold": [20.0, 25.0, 30.0],
        "overbought": [70.0, 75.0, 80.0],
    },
}


def _key(result: BacktestResult) -> tuple[Any, ...]:
    fills = [(f.time, f.size, f.price, f.commission) for f in result.fills]
    return (fills, result.trades, round(result.final_value, 2))


def _timed(runs: list[Callable[[], BacktestResult]]) -> tuple[float, list[BacktestResult]]:
    start = time.perf_counter()
    results = [run() for run in runs]
    return time.perf_counter() - start, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--symbol", default="NVDA")
    parser.add_argument("--from", dest="first", default="2009-01-01")
    parser.add_argument("--to", dest="last", default="2018-12-31")
    parser.add_argument("--strategy", default="sma_cross", choices=sorted(GRIDS))
    parser.add_argument("--long-short", action="store_true")
    parser.add_argument("--sets", type=int, default=0, help="the grid's first N (0: all)")
    parser.add_argument("--quick", action="store_true", help="smallest setting: check that it runs")
    args = parser.parse_args()
    if args.quick:  # explicit options still win
        parser.set_defaults(first="2018-01-01", sets=10)
        args = parser.parse_args()

    end = datetime.combine(date.fromisoformat(args.last), datetime.max.time(), tzinfo=UTC)
    daily = BundledProvider().daily_bars(args.symbol, end)
    frame, _ = frame_from_bars(daily)  # history before --from warms the indicators up
    first = date.fromisoformat(args.first)
    config = BacktestConfig(costs=Costs(0.001, slippage=0.0005), long_short=args.long_short)

    grid = GRIDS[args.strategy]
    sets: list[dict[str, Any]] = [{}]
    for name, values in grid.items():
        sets = [{**s, name: v} for s in sets for v in values]
    if args.strategy in ("sma_cross", "macd"):
        sets = [s for s in sets if s["fast"] < s["slow"]]
    if args.strategy == "zmr":
        sets = [s for s in sets if s["exit"] < s["entry"]]
    sets = sets[: args.sets] if args.sets else sets

    def runs(engine: str) -> list[Callable[[], BacktestResult]]:
        return [
            lambda p=p: run_strategy(  # type: ignore[misc]
                args.strategy, frame, p, config, engine=engine, trade_from=first
            )
            for p in sets
        ]

    run_strategy(args.strategy, frame, sets[0], config, trade_from=first)  # warm imports
    run_strategy(args.strategy, frame, sets[0], config, engine="backtrader", trade_from=first)
    fast_s, fast = _timed(runs("fast"))
    bt_s, reference = _timed(runs("backtrader"))
    differ = [p for p, a, b in zip(sets, fast, reference, strict=True) if _key(a) != _key(b)]
    bars = len(fast[0].equity)
    fills = sum(len(r.fills) for r in fast)

    print(
        f"{args.strategy} on {args.symbol} {fast[0].equity.index[0].date()} to "
        f"{fast[0].equity.index[-1].date()}: {bars} bars, {len(sets)} parameter sets, "
        f"{fills} fills, {'long/short' if args.long_short else 'long/flat'}"
    )
    print(f"  fast path   {fast_s:8.3f} s   {fast_s / len(sets) * 1e3:8.2f} ms/run")
    print(f"  backtrader  {bt_s:8.3f} s   {bt_s / len(sets) * 1e3:8.2f} ms/run")
    print(f"  speed-up    {bt_s / fast_s:8.1f} x")
    print(f"  runs whose fills, trades or final value differ: {len(differ)} of {len(sets)}")
    for params in differ[:5]:
        print(f"    {params}")
    t0 = time.perf_counter()
    sharpe = [(r.metrics().sharpe or float("-inf"), p) for r, p in zip(fast, sets, strict=True)]
    metrics_s = time.perf_counter() - t0
    best = max(sharpe, key=lambda x: x[0])
    print(f"  metrics of all runs: {metrics_s:.3f} s; best Sharpe {best[0]:.2f} at {best[1]}")


if __name__ == "__main__":
    main()

"""Does moving a tool's CPU-bound analytics to a thread (``asyncio.to_thread``) help the other
agents of the same run?

    python bench/offload.py [--calls 20] [--quick]

The analytics a desk's tools compute (the indicator snapshot, support and resistance, chart
patterns) over one symbol's bundled daily bars, ``--calls`` times, with a heartbeat on the
same event loop standing for the run's other agents (each waiting on a model's answer):

- inline: each call on the loop, as the tools make them;
- to_thread: each call in a worker thread, the loop awaiting it.

Prints the wall, the CPU time, and how late the heartbeat (every 5 ms) woke: its p50, p99
and worst delay, i.e. how long another agent waits to handle its model's answer. Then the
same with two calls at a time in threads: whether the analytics release the GIL enough to
run in parallel (the wall would halve).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import date

import pandas as pd

from alphadesk.analytics.levels import support_resistance
from alphadesk.analytics.patterns import double_tops_bottoms, triangles_channels
from alphadesk.analytics.snapshot import indicator_snapshot
from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.calendar import close_on_or_before

_BEAT_S = 0.005


def _analytics(frame: pd.DataFrame) -> None:
    indicator_snapshot(frame)
    support_resistance(frame)
    double_tops_bottoms(frame)
    triangles_channels(frame)


async def _heartbeat(stop: asyncio.Event, delays: list[float]) -> None:
    while not stop.is_set():
        due = time.perf_counter() + _BEAT_S
        await asyncio.sleep(_BEAT_S)
        delays.append(max(0.0, time.perf_counter() - due))


async def _measure(
    label: str, calls: int, work: Callable[[], Awaitable[None]], parallel: int = 1
) -> None:
    stop, delays = asyncio.Event(), []
    beat = asyncio.create_task(_heartbeat(stop, delays))
    await asyncio.sleep(0.05)
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls // parallel):
        await asyncio.gather(*(work() for _ in range(parallel)))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    stop.set()
    await beat
    ms = sorted(d * 1000 for d in delays)
    p50, p99 = statistics.median(ms), ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    print(f"  {label:<26} wall {wall:6.2f} s  cpu {cpu:6.2f} s  heartbeat late: "
          f"p50 {p50:6.1f} ms, p99 {p99:6.1f} ms, worst {ms[-1]:6.1f} ms")  # fmt: skip


async def _main(calls: int) -> None:
    settings = Settings(memory={"enabled": False})
    market = build_provider(settings)
    frame = market.daily_bars("NVDA", close_on_or_before(date(2021, 6, 30))).frame
    _analytics(frame)  # warm: imports, caches

    async def inline() -> None:
        _analytics(frame)

    async def threaded() -> None:
        await asyncio.to_thread(_analytics, frame)

    print(f"{calls} calls of the desk's analytics on {len(frame)} daily bars of NVDA")
    await _measure("inline (on the loop)", calls, inline)
    await _measure("to_thread, one at a time", calls, threaded)
    await _measure("to_thread, two at a time", calls, threaded, parallel=2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="smallest setting: check that it runs")
    args = parser.parse_args()
    if args.quick:  # explicit options still win
        parser.set_defaults(calls=2)
        args = parser.parse_args()
    asyncio.run(_main(args.calls))


if __name__ == "__main__":
    main()

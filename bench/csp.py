"""Cash-secured-put desk benchmarks.

    python bench/csp.py [--quick]

Prints, in one run:

- one offline CSP run (NVDA, `rules` model): wall and CPU seconds, without charts (as in a
  screen) and with them (as `alphadesk csp` draws for its report);
- a screen of the whole bundled universe on one date, in this process and spread over the
  cores: symbols per second, share rejected by the pre-filter;
- the universe on 10 dates (every 5th session): symbol-dates per second;
- with every model call made to take 1 s, the pipeline's wall time against the sum of its
  model latencies, sequential and with research run alongside the chart step.

Goals on 2 cores: one run <= 0.3 s, a screen >= 10 symbols/s, 310 symbol-dates < 45 s.
``--quick``: one run each, four symbols on one date, 0.1 s per model call on NVDA alone.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from datetime import date, datetime
from pathlib import Path

from alphadesk.agents.csp import default_agents
from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.calendar import session_close
from alphadesk.llm.messages import Message, ModelResponse, RequestSettings, ToolSpec
from alphadesk.llm.rules import RulesModel
from alphadesk.llm.wrapper import ModelWrapper
from alphadesk.pipelines.csp.models import CspRequest, CspResult
from alphadesk.pipelines.csp.pipeline import CspPipeline
from alphadesk.pipelines.runner import PipelineRunner
from alphadesk.pipelines.screen.models import ScreenRequest
from alphadesk.pipelines.screen.pipeline import rebalancing_dates, run_screens


class SlowModel(ModelWrapper):
    """The rules policy, taking ``latency`` seconds per call like a remote model."""

    def __init__(self, inner: RulesModel, latency: float) -> None:
        super().__init__(inner)
        self.latency, self.calls = latency, 0

    @property
    def name(self) -> str:
        return "slow-rules"

    async def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        self.calls += 1
        await asyncio.sleep(self.latency)
        return await super().request(messages, tools, settings)


def _settings() -> Settings:
    return Settings(data_dir=Path(tempfile.mkdtemp(prefix="alphadesk-bench-")))


async def one_symbol(charts: bool, runs: int) -> None:
    settings = _settings()
    runner = PipelineRunner(
        settings, CspPipeline(settings, build_provider(settings)), charts=charts
    )
    request = CspRequest(symbol="NVDA", as_of=session_close(_day("2024-11-29")))
    await runner.analyze(request)  # warm: imports, calendars, bundled files
    walls, cpus = [], []
    for _ in range(runs):
        started, cpu = time.perf_counter(), time.process_time()
        result = await runner.analyze(request)
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu)
    assert result is not None
    calls = sum(a.requests for a in result.agents)
    print(
        f"one run (NVDA 2024-11-29, rules, {'with' if charts else 'no'} charts): "
        f"{statistics.median(walls):.2f} s wall, {statistics.median(cpus):.2f} s CPU "
        f"(median of {runs}), {calls} model calls, decision {result.decision}"
    )


async def screens(workers: int, dates: list[datetime], symbols: int = 0) -> None:
    settings = _settings()
    universe = build_provider(settings).universe()
    universe = universe[:symbols] if symbols else universe
    request = ScreenRequest(symbols=universe, dates=dates)
    started = time.perf_counter()
    history = await run_screens(settings, request, workers=workers)
    wall = time.perf_counter() - started
    checks = [c for s in history.screens for c in s.checks]
    results = [r for s in history.screens for r in s.results]
    rejected = sum(not c.passed for c in checks) / len(checks)
    selected = sum(r.decision == "select" for r in results)
    print(
        f"screen, {len(universe)} symbols x {len(dates)} date(s), {workers} process(es): "
        f"{history.outcomes} symbol-dates in {wall:.1f} s ({history.outcomes / wall:.1f}/s); "
        f"pre-filter rejected {rejected:.0%}; desk ran {len(results)}, selected {selected}"
    )


async def latency(
    parallel: bool, symbol: str, day: str, seconds: float
) -> tuple[float, float, int, CspResult]:
    settings = _settings()
    agents = default_agents()
    models = {n: SlowModel(RulesModel(agents.by_name(n).policy), seconds) for n in agents.names}
    runner = PipelineRunner(
        settings, CspPipeline(settings, build_provider(settings), models=models)
    )
    request = CspRequest(symbol=symbol, as_of=session_close(_day(day)), parallel_research=parallel)
    started = time.perf_counter()
    result = await runner.analyze(request)
    wall = time.perf_counter() - started
    assert result is not None
    calls = sum(m.calls for m in models.values())
    return wall, calls * seconds, calls, result


async def with_latency(seconds: float, runs: list[tuple[str, str]]) -> None:
    print(f"with {seconds:g} s per model call:")
    for symbol, day in runs:
        for parallel in (False, True):
            wall, total, calls, result = await latency(parallel, symbol, day, seconds)
            mode = "research alongside chart" if parallel else "sequential"
            print(
                f"  {symbol} {day} {mode:>25}: {wall:5.2f} s wall vs {total:4.1f} s of model "
                f"latency, {calls} calls, {result.decision}"
            )


def _day(text: str) -> date:
    return date.fromisoformat(text)


async def main(quick: bool) -> None:
    cores = os.cpu_count() or 1
    runs, symbols = (1, 4) if quick else (5, 0)
    await one_symbol(charts=False, runs=runs)
    await one_symbol(charts=True, runs=runs)
    one_date = [session_close(_day("2012-06-29"))]
    if not quick:
        await screens(1, one_date)  # warm: every bundled file read once (workers inherit them)
    await screens(1, one_date, symbols)
    await screens(cores, one_date, symbols)
    if quick:
        await with_latency(0.1, [("NVDA", "2024-11-29")])
        return
    await screens(cores, rebalancing_dates(_day("2012-03-01"), _day("2012-12-31"), 5)[:10])
    await with_latency(1.0, [("NVDA", "2024-11-29"), ("AMZN", "2008-11-28")])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smallest setting: check that it runs")
    asyncio.run(main(parser.parse_args().quick))

"""Cash-secured-put desk benchmarks.

    python bench/csp.py

Prints: wall time and model calls for one symbol with the offline `rules` model; a screen
of the whole bundled universe (symbols per second, share rejected by the pre-filter); and,
with every model call made to take 1 s, the pipeline's wall time against the sum of its
model latencies, sequential and with research run alongside the chart step.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from alphadesk.agents.csp import default_agents
from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.calendar import session_close
from alphadesk.llm.messages import Message, ModelResponse, RequestSettings, ToolSpec
from alphadesk.llm.rules import RulesModel
from alphadesk.pipelines.csp.models import CspRequest, CspResult
from alphadesk.pipelines.csp.run import CspRunner
from alphadesk.pipelines.csp.screen import screen


class SlowModel:
    """The rules policy, taking ``latency`` seconds per call like a remote model."""

    def __init__(self, inner: RulesModel, latency: float) -> None:
        self.inner, self.latency, self.calls = inner, latency, 0

    @property
    def name(self) -> str:
        return "slow-rules"

    def supports(self, capability: str) -> bool:
        return self.inner.supports(capability)

    async def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        self.calls += 1
        await asyncio.sleep(self.latency)
        return await self.inner.request(messages, tools, settings)


def _settings() -> Settings:
    return Settings(data_dir=Path(tempfile.mkdtemp(prefix="alphadesk-bench-")))


async def one_symbol() -> None:
    settings = _settings()
    runner = CspRunner(settings, build_provider(settings))
    request = CspRequest(symbol="NVDA", as_of=session_close(_day("2024-11-29")))
    await runner.analyze(request)  # warm: imports, calendars, bundled files
    started = time.perf_counter()
    result = await runner.analyze(request)
    wall = time.perf_counter() - started
    assert result is not None
    calls = sum(a.requests for a in result.agents)
    print(
        f"one symbol (NVDA, rules model): {wall:.2f} s wall, {calls} model calls, "
        f"decision {result.decision}"
    )


async def whole_universe() -> None:
    settings = _settings()
    market = build_provider(settings)
    runner = CspRunner(settings, market, concurrency=4)
    universe = market.universe()
    started = time.perf_counter()
    result = await screen(runner, universe, session_close(_day("2012-06-29")))
    wall = time.perf_counter() - started
    selected = sum(r.decision == "select" for r in result.results)
    print(
        f"screen of the bundled universe as of 2012-06-29: {len(universe)} symbols in "
        f"{wall:.1f} s ({len(universe) / wall:.1f} symbols/s); pre-filter rejected "
        f"{result.rejected_share:.0%}; desk ran on {len(result.results)}, selected {selected}"
    )


async def latency(parallel: bool, symbol: str, day: str) -> tuple[float, float, int, CspResult]:
    settings = _settings()
    agents = default_agents()
    models = {n: SlowModel(RulesModel(agents.by_name(n).policy), 1.0) for n in agents.names}
    runner = CspRunner(settings, build_provider(settings), models=models)
    request = CspRequest(symbol=symbol, as_of=session_close(_day(day)), parallel_research=parallel)
    started = time.perf_counter()
    result = await runner.analyze(request)
    wall = time.perf_counter() - started
    assert result is not None
    calls = sum(m.calls for m in models.values())
    return wall, calls * 1.0, calls, result


async def with_latency() -> None:
    print("with 1 s per model call:")
    for symbol, day in (("NVDA", "2024-11-29"), ("AMZN", "2008-11-28")):
        for parallel in (False, True):
            wall, total, calls, result = await latency(parallel, symbol, day)
            mode = "research alongside chart" if parallel else "sequential"
            print(
                f"  {symbol} {day} {mode:>25}: {wall:5.2f} s wall vs {total:4.1f} s of model "
                f"latency, {calls} calls, {result.decision}"
            )


def _day(text: str) -> date:
    return date.fromisoformat(text)


async def main() -> None:
    await one_symbol()
    await whole_universe()
    await with_latency()


if __name__ == "__main__":
    asyncio.run(main())

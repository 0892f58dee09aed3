"""Trading desk benchmarks: how much of the run is spent waiting on model calls.

    python bench/desk.py [--quick]

Every agent answers with its rules policy after sleeping 1 s per call, like a remote
model, at 1 debate exchange and 1 risk exchange. Prints the model calls, the desk's wall
time, and that wall time divided by the calls on its critical path (analysts in parallel;
per exchange bull and bear arguing together, then rebutting together, and the three risk
analysts likewise), beside a TradingAgents-shaped reference: the same agents' calls in
its order, one after another (the four analysts in turn, bull then bear, the manager, the
trader, risky then safe then neutral, the judge; one turn per debater per round, so no
rebuttals), and beside a strictly sequential run of the desk's own calls (every call
holding one shared lock). Goals: desk wall <= 0.65x the reference and <= 1.15x its own
critical path.

It also prints the desk's own work per decision: rules models with no latency, no charts,
no memory and no checkpoints (as an evaluation runs it), one desk deciding a few symbols
on weekly dates, the mean after a warm-up. Goal: <= 0.1 s. Measured on an idle 2-core
machine: 0.075-0.081 s (0.077-0.083 s CPU); 0.109 s without the collector freeze an
evaluation's worker makes; 0.164 s (0.161 s CPU) before the analytics ran on arrays and a
run's record was written once per step, and 0.29-0.54 s (0.19-0.22 s CPU, at load average
2-5) before the graph was compiled once per shape. The machine's own noise is about 10 %.

``--quick``: 4 decisions of the desk's own work and 0.1 s per model call.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from alphadesk.agents.desk import ANALYSTS, default_agents
from alphadesk.config import MemorySettings, Settings
from alphadesk.data import build_provider
from alphadesk.data.calendar import session_close, sessions_between
from alphadesk.llm.messages import Message, ModelResponse, RequestSettings, ToolSpec
from alphadesk.llm.rules import RulesModel
from alphadesk.llm.wrapper import ModelWrapper
from alphadesk.pipelines.desk.models import DeskRequest, DeskResult
from alphadesk.pipelines.desk.pipeline import TradingDesk
from alphadesk.pipelines.models import AgentReport
from alphadesk.pipelines.runner import PipelineRunner

SYMBOL, DAY = "AAPL", "2012-03-30"
LATENCY = 1.0
# The desk's own work: these symbols in turn, weekly from this date, this many decisions.
OVERHEAD_SYMBOLS = ("AAPL", "JPM", "XOM", "WMT")
OVERHEAD_FROM, OVERHEAD_DECISIONS = "2013-01-02", 60
_TOGETHER = (frozenset({"bull", "bear"}), frozenset({"risky", "safe", "neutral"}))


class SlowModel(ModelWrapper):
    """The rules policy, taking ``latency`` seconds per call; with a shared ``lock`` no
    two calls of any agent overlap (a strictly sequential run)."""

    def __init__(self, inner: RulesModel, latency: float, lock: asyncio.Lock | None) -> None:
        super().__init__(inner)
        self.latency, self.lock, self.calls = latency, lock, 0

    @property
    def name(self) -> str:
        return "slow-rules"

    async def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        if self.lock is None:
            return await self._answer(messages, tools, settings)
        async with self.lock:
            return await self._answer(messages, tools, settings)

    async def _answer(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        self.calls += 1
        await asyncio.sleep(self.latency)
        return await super().request(messages, tools, settings)


def critical_calls(agents: list[AgentReport]) -> int:
    """Model calls on the critical path: the slowest analyst; per step of a debate (the
    arguments of an exchange, then its rebuttals) its slowest speaker; the manager, trader
    and judge one after another."""
    total = max(a.requests for a in agents if a.agent in ANALYSTS)
    rounds: dict[tuple[frozenset[str], int], int] = {}
    turns: Counter[str] = Counter()
    for report in agents:
        if report.agent in ANALYSTS:
            continue
        together = next((g for g in _TOGETHER if report.agent in g), None)
        if together is None:
            total += report.requests
            continue
        turns[report.agent] += 1  # a speaker's n-th turn is in the debate's n-th step
        key = (together, turns[report.agent])
        rounds[key] = max(rounds.get(key, 0), report.requests)
    return total + sum(rounds.values())


def reference_calls(agents: list[AgentReport]) -> int:
    """Model calls of a TradingAgents-shaped run of the same agents, all one after another:
    every agent's calls as the desk made them, except that a debater speaks once per round
    there, so only the desk's arguments count, not its rebuttals (every second turn)."""
    total, turns = 0, Counter[str]()
    for report in agents:
        together = any(report.agent in group for group in _TOGETHER)
        turns[report.agent] += 1
        if not (together and turns[report.agent] % 2 == 0):
            total += report.requests
    return total


async def run(latency: float, *, sequential: bool) -> tuple[float, int, DeskResult]:
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="alphadesk-bench-")))
    lock = asyncio.Lock() if sequential else None
    models = {s.name: SlowModel(RulesModel(s.policy), latency, lock) for s in default_agents().all}
    desk = TradingDesk(settings, build_provider(settings), models=models)
    request = DeskRequest(
        symbol=SYMBOL,
        as_of=session_close(date.fromisoformat(DAY)),
        rounds=1,
        risk_rounds=1,
    )
    started = time.perf_counter()
    result = await PipelineRunner(settings, desk).analyze(request)
    wall = time.perf_counter() - started
    assert result is not None and result.decision != "failed", result
    return wall, sum(m.calls for m in models.values()), result


async def overhead(decisions: int = OVERHEAD_DECISIONS) -> tuple[float, float]:
    """Mean wall and CPU time (all threads) of one decision of the desk's own work: one desk
    and runner deciding symbols in turn on weekly dates, after one uncounted decision of
    each symbol (which reads its files), with what is alive then frozen out of the
    collector's walks, as an evaluation's worker does after its first batch."""
    settings = Settings(
        data_dir=Path(tempfile.mkdtemp(prefix="alphadesk-bench-")),
        memory=MemorySettings(enabled=False),
    )
    models = {s.name: RulesModel(s.policy) for s in default_agents().all}
    desk = TradingDesk(settings, build_provider(settings), models=models)
    runner = PipelineRunner(settings, desk, charts=False, checkpoints=False)
    days = sessions_between(date.fromisoformat(OVERHEAD_FROM), date(2099, 1, 1))[::5]
    pairs = [(s, session_close(d)) for d in days for s in OVERHEAD_SYMBOLS]
    warm, wall, cpu = len(OVERHEAD_SYMBOLS), 0.0, 0.0
    for i, (symbol, as_of) in enumerate(pairs[: warm + decisions]):
        if i == warm:  # as an evaluation's worker does after its first batch
            gc.collect()
            gc.freeze()
        request = DeskRequest(symbol=symbol, as_of=as_of, memory=False)
        started, used = time.perf_counter(), time.process_time()
        result = await runner.analyze(request)
        if i >= warm:
            wall += time.perf_counter() - started
            cpu += time.process_time() - used
        assert result is not None and result.decision != "failed", result
    return wall / decisions, cpu / decisions


async def main(quick: bool) -> None:
    latency, decisions = (0.1, 4) if quick else (LATENCY, OVERHEAD_DECISIONS)
    # First, in a process that has done nothing else, like an evaluation's worker: the runs
    # below load the memory's vector store, whose objects every later collection walks.
    per_decision, cpu = await overhead(decisions)
    await run(0.0, sequential=False)  # warm: imports, calendars, bundled files
    offline, calls, result = await run(0.0, sequential=False)
    print(
        f"offline (rules, no latency): {offline:.2f} s wall, {calls} model calls, "
        f"decision {result.decision}"
    )
    print(
        f"desk's own work: {per_decision:.3f} s per decision, {cpu:.3f} s CPU (goal <= 0.10 s;"
        f" rules, no latency, no charts, no memory, no checkpoints; mean of {decisions}"
        f" decisions of {', '.join(OVERHEAD_SYMBOLS)} weekly from {OVERHEAD_FROM})"
    )
    wall, calls, result = await run(latency, sequential=False)
    serial, serial_calls, _ = await run(latency, sequential=True)
    critical, reference = critical_calls(result.agents), reference_calls(result.agents)
    print(f"{SYMBOL} {DAY}, 1 debate exchange, 1 risk exchange, {latency:g} s per model call:")
    print(f"  model calls            {calls} ({critical} on the critical path)")
    print(f"  desk wall              {wall:6.2f} s")
    print(f"  TradingAgents-shaped   {reference * latency:6.2f} s ({reference} calls in its order)")
    print(f"  strictly sequential    {serial:6.2f} s ({serial_calls} calls one after another)")
    print(f"  desk / TradingAgents   {wall / (reference * latency):6.2f}x   (goal <= 0.65x)")
    print(f"  desk / critical path   {wall / (critical * latency):6.2f}x   (goal <= 1.15x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smallest setting: check that it runs")
    asyncio.run(main(parser.parse_args().quick))

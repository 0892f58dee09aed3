"""Engine benchmarks: loop overhead, concurrent tool calls, CLI cold start.

    python bench/engine.py [--quick]

Goals: loop overhead per turn under 1 ms with a zero-latency scripted model; one turn with
8 tool calls of 100 ms each under 150 ms (sequential would be 800 ms); `alphadesk --help`
cold start under 1 s (litellm is imported lazily: it alone takes about 3 s). ``--quick``:
50 turns, each measure once.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from alphadesk.agent import Agent, RunScope, Toolset, tool
from alphadesk.llm.testing import ScriptedModel, tool_calls

AS_OF = datetime(2021, 6, 30, tzinfo=UTC)


@tool
async def instant(x: int) -> int:
    """Return x.

    Args:
        x: Any number.
    """
    return x


@tool
async def sleepy(x: int) -> int:
    """Sleep 100 ms, then return x.

    Args:
        x: Any number.
    """
    await asyncio.sleep(0.1)
    return x


async def loop_overhead(turns: int = 500) -> float:
    """Mean wall time per turn (one model request plus one instant tool call)."""
    agent: Agent[None, str] = Agent(
        name="bench",
        instructions="",
        output_type=str,
        toolset=Toolset.of("b", [instant]),
        max_turns=turns + 1,
    )
    script = [tool_calls(("instant", {"x": i})) for i in range(turns)] + ["done"]
    started = time.perf_counter()
    result = await agent.run(ScriptedModel(script), "go", deps=None, scope=RunScope(as_of=AS_OF))
    elapsed = time.perf_counter() - started
    assert result.ok, result.outcome
    return elapsed / (turns + 1)


async def concurrent_turn(calls: int = 8) -> float:
    agent: Agent[None, str] = Agent(
        name="bench", instructions="", output_type=str, toolset=Toolset.of("b", [sleepy])
    )
    script = [tool_calls(*[("sleepy", {"x": i}) for i in range(calls)]), "done"]
    started = time.perf_counter()
    result = await agent.run(ScriptedModel(script), "go", deps=None, scope=RunScope(as_of=AS_OF))
    assert result.ok and result.tool_calls == calls
    return time.perf_counter() - started


def cli_cold_start(runs: int = 5) -> float:
    exe = Path(sys.executable).with_name("alphadesk")
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([str(exe), "--help"], check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smallest setting: check that it runs")
    quick = parser.parse_args().quick
    turns, repeats = (50, 1) if quick else (500, 3)
    per_turn = min(asyncio.run(loop_overhead(turns)) for _ in range(repeats))
    print(f"loop overhead per turn (zero-latency model): {per_turn * 1000:.3f} ms  (goal < 1 ms)")
    wall = min(asyncio.run(concurrent_turn()) for _ in range(repeats))
    print(
        f"one turn, 8 tool calls x 100 ms: {wall * 1000:.0f} ms  "
        "(goal < 150 ms; sequential: 800 ms)"
    )
    runs = 1 if quick else 5
    cold = cli_cold_start(runs)
    print(f"`alphadesk --help` cold start (median of {runs}): {cold * 1000:.0f} ms  (goal < 1 s)")


if __name__ == "__main__":
    main()

"""Assistant benchmarks: routing overhead, and a DIRECT question's concurrent tools.

    python bench/assistant.py [--quick]

* Routing overhead: the PLANNING phase of a question (classify, resolve the instant,
  route), from the first state change to the route, with the rules models on the bundled
  data and with zero-latency scripted models (the engine alone).
* DIRECT with four tools of 1 s each: the whole question (scripted router and answer) runs
  the four calls at once, so it takes about 1 s; the same four calls one by one take 4 s.

``--quick``: each question routed once instead of three times.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from alphadesk.agent import RunContext, Toolset, tool
from alphadesk.agent.events import BaseEvent
from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.llm.testing import ScriptedModel, json_answer
from alphadesk.pipelines.assistant import AssistantPipeline, ChatRequest
from alphadesk.tools.catalog import ToolCatalog

QUESTIONS = [
    "hello",
    "how does NVDA look technically",
    "compare AAPL and MSFT",
    "what are my positions",
    "sell a 0DTE SPY strangle",
]
TOOL_SECONDS = 1.0


def _planning_ms(events: list[BaseEvent]) -> float:
    # Each event is stamped when it is emitted (not when a consumer reads it).
    start = next(e.at for e in events if e.kind == "state")
    routed = next(e.at for e in events if e.kind == "routed")
    return (routed - start).total_seconds() * 1000


async def _routing(pipeline_for: Any, repeats: int) -> list[float]:
    timings: list[float] = []
    for _ in range(repeats):
        for question in QUESTIONS:
            pipeline = pipeline_for(question)
            events: list[BaseEvent] = []
            await pipeline.ask(ChatRequest(question=question), events.append)
            timings.append(_planning_ms(events))
    return timings


def _slow(name: str) -> Any:
    async def slow(ctx: RunContext[Any], symbol: str) -> dict[str, Any]:
        await asyncio.sleep(TOOL_SECONDS)
        return {"symbol": symbol, "tool": name, "value": 1.5}

    slow.__doc__ = f"""A tool that takes {TOOL_SECONDS:g} s ({name}).

    Args:
        symbol: Ticker.
    """
    return tool(name=name)(slow)


async def _direct(settings: Settings, market: Any) -> tuple[float, float]:
    tools = [_slow(f"slow_{i}") for i in range(4)]
    catalog = ToolCatalog((Toolset.of("slow", tools),))
    decision = {
        "selected_tools": [t.name for t in tools],
        "complexity": "MEDIUM",
        "strategy": "DIRECT",
        "calls": [{"tool": t.name, "arguments": {"symbol": "NVDA"}} for t in tools],
    }
    models = {
        "router": ScriptedModel([json_answer(decision)]),
        "answer": ScriptedModel(["All four answered 1.5."]),
    }
    pipeline = AssistantPipeline(settings, market, model="rules", models=models, catalog=catalog)
    started = time.perf_counter()
    result = await pipeline.ask(ChatRequest(question="how does NVDA look?"))
    concurrent = time.perf_counter() - started
    assert result.status == "completed" and len(result.tool_calls) == 5, result
    ctx = RunContext(deps=None, as_of=result.as_of, run_id="bench", agent="bench")
    started = time.perf_counter()
    for item in tools:
        await item.call(ctx, {"symbol": "NVDA"})
    return concurrent, time.perf_counter() - started


async def main(repeats: int) -> None:
    settings = Settings(data_dir=Path(tempfile.mkdtemp()) / "alphadesk")
    market = build_provider(settings)
    rules = AssistantPipeline(settings, market, model="rules")
    await rules.ask(ChatRequest(question="hello"))  # warm the data and calendar caches
    by_rules = await _routing(lambda q: rules, repeats=repeats)

    def scripted(question: str) -> AssistantPipeline:
        classification = {"question_type": "general", "symbols": [], "categories": []}
        decision = {"selected_tools": [], "complexity": "SIMPLE", "strategy": "DIRECT"}
        models = {
            "classifier": ScriptedModel([json_answer(classification)]),
            "router": ScriptedModel([json_answer(decision)]),
            "answer": ScriptedModel(["ok"]),
        }
        return AssistantPipeline(settings, market, models=models, model="rules")

    by_script = await _routing(scripted, repeats=repeats)
    print(
        f"routing overhead, rules models, {len(by_rules)} questions: "
        f"median {statistics.median(by_rules):.1f} ms, max {max(by_rules):.1f} ms"
    )
    print(
        f"routing overhead, zero-latency scripted models: "
        f"median {statistics.median(by_script):.1f} ms, max {max(by_script):.1f} ms"
    )
    concurrent, sequential = await _direct(settings, market)
    print(
        f"DIRECT question, 4 tools of {TOOL_SECONDS:g} s: {concurrent:.2f} s for the whole "
        f"question; the same calls one by one: {sequential:.2f} s"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smallest setting: check that it runs")
    asyncio.run(main(1 if parser.parse_args().quick else 3))

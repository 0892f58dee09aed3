"""Token economy: the prompt and completion tokens of one run of each pipeline.

    python bench/tokens.py [--tokenizer gpt-4o] [--quick] [PIPELINE ...]
    python bench/tokens.py portfolio [--quick]

Every agent answers with its ``rules`` policy on the bundled data, through a counting
wrapper that takes each request exactly as a provider would receive it (the messages and
tool schemas in OpenAI's format, plus the answer's JSON schema when one is asked for) and
counts it with LiteLLM's tokenizer for the named model, offline, without calling it. A
real model writes differently, so completions are indicative; prompts are exact for what
the pipeline sends. Runs: csp (NVDA 2024-11-29), desk (AAPL 2012-03-30, 1 debate exchange,
1 risk exchange), ask (3 questions), algo (AAPL to 2012-12-31, 2 variants, 1 iteration),
portfolio (the trading desk as one book over StockBench's window, ``eval --portfolio``'s
walk: every session of 2025-03-01..06-30 for the 20 Dow stocks, 1,660 symbol-days; with
``--quick`` a stated sample, the first two weeks' 10 sessions for 5 of them), its figure
per symbol-day and the symbol-days the triage updated and carried: a full desk each
first, then with the analysts' reports reused while what they read is unchanged
(``--reuse-reports``), then with each name decided at the depth the triage calls
(``--depth triage``: the whole desk, its quick update on news alone, or the last
decision carried), alone and with reports reused.

Goals: a whole desk decision under 60k prompt tokens, a csp run under 30k, the portfolio
under 15k per symbol-day on average over the window. For scale,
TradingAgents-CN users report ~2M tokens per analysis and FinRobot ~175k per report.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download at import

from alphadesk.agents.algo import default_agents as algo_agents
from alphadesk.agents.csp import default_agents as csp_agents
from alphadesk.agents.desk import default_agents as desk_agents
from alphadesk.config import MemorySettings, Settings
from alphadesk.data import build_provider
from alphadesk.data.base import MarketData
from alphadesk.data.calendar import session_close
from alphadesk.llm.base import Model
from alphadesk.llm.messages import (
    Message,
    ModelResponse,
    RequestSettings,
    ToolMessage,
    ToolSpec,
    text_of,
)
from alphadesk.llm.openai_format import to_openai_messages, to_openai_tools
from alphadesk.llm.rules import RulesModel, RulesPolicy
from alphadesk.llm.wrapper import ModelWrapper
from alphadesk.pipelines.algo.models import AlgoRequest
from alphadesk.pipelines.algo.pipeline import StrategyLab
from alphadesk.pipelines.assistant import AssistantPipeline, ChatRequest
from alphadesk.pipelines.assistant.pipeline import AGENTS as ASSISTANT_AGENTS
from alphadesk.pipelines.csp.models import CspRequest
from alphadesk.pipelines.csp.pipeline import CspPipeline
from alphadesk.pipelines.desk.models import DeskRequest
from alphadesk.pipelines.desk.pipeline import TradingDesk
from alphadesk.pipelines.evaluation.desk_book import Depth, evaluate_desk_book
from alphadesk.pipelines.evaluation.stockbench import PROTOCOL
from alphadesk.pipelines.runner import PipelineRunner

GOALS = {"csp": 30_000, "desk": 60_000, "portfolio": 15_000}
ANCHORS = "TradingAgents-CN ~2,000,000 tokens per analysis; FinRobot ~175,000 per report"
QUESTIONS = ("how does NVDA look technically", "compare AAPL and MSFT", "how is the market?")


@dataclass
class AgentTally:
    requests: int = 0
    prompt: int = 0
    completion: int = 0
    largest: int = 0  # the largest single request's prompt
    tool_schemas: int = 0  # of the prompt: the tools offered
    tool_results: int = 0  # of the prompt: what the tools answered, as history


@dataclass
class Tally:
    """Tokens per agent of one pipeline run."""

    tokenizer: str
    agents: dict[str, AgentTally] = field(default_factory=dict)
    per: int = 1  # what a figure is divided by: the symbol-days of a book

    def count(self, text: str | None = None, **request: Any) -> int:
        from litellm import token_counter

        if text is not None:
            return int(token_counter(model=self.tokenizer, text=text))
        return int(token_counter(model=self.tokenizer, **request))

    @property
    def prompt(self) -> int:
        return sum(a.prompt for a in self.agents.values())

    @property
    def completion(self) -> int:
        return sum(a.completion for a in self.agents.values())


class CountingModel(ModelWrapper):
    """One agent's model (its rules policy), counting every request and answer in
    ``tally``."""

    def __init__(self, agent: str, inner: Model, tally: Tally) -> None:
        super().__init__(inner)
        self.agent, self.tally = agent, tally

    async def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        response = await super().request(messages, tools, settings)
        t = self.tally
        prompt = t.count(
            messages=to_openai_messages(messages, vision=False),
            tools=to_openai_tools(tools) or None,
        )
        if settings.output_schema is not None:  # sent as response_format
            prompt += t.count(json.dumps(settings.output_schema))
        answer = response.message
        written = (answer.content or "") + "".join(c.name + c.arguments for c in answer.tool_calls)
        tally = t.agents.setdefault(self.agent, AgentTally())
        tally.requests += 1
        tally.prompt += prompt
        tally.completion += t.count(written) if written else 0
        tally.largest = max(tally.largest, prompt)
        if tools:
            tally.tool_schemas += t.count(json.dumps(to_openai_tools(tools)))
        tally.tool_results += sum(
            t.count(text_of(m.content)) for m in messages if isinstance(m, ToolMessage)
        )
        return response


def counting(policies: dict[str, RulesPolicy], tally: Tally) -> dict[str, Any]:
    return {
        name: CountingModel(name, RulesModel(policy), tally) for name, policy in policies.items()
    }


async def run_csp(settings: Settings, market: MarketData, tally: Tally) -> None:
    agents = csp_agents()
    specs = [agents.chart, agents.options, agents.research, agents.narrator]
    models = counting({s.name: s.policy for s in specs}, tally)
    request = CspRequest(symbol="NVDA", as_of=session_close(date(2024, 11, 29)))
    result = await PipelineRunner(settings, CspPipeline(settings, market, models=models)).analyze(
        request
    )
    assert result is not None


async def run_desk(settings: Settings, market: MarketData, tally: Tally) -> None:
    models = counting({s.name: s.policy for s in desk_agents().all}, tally)
    desk = TradingDesk(settings, market, models=models)
    request = DeskRequest(
        symbol="AAPL",
        as_of=session_close(date(2012, 3, 30)),
        rounds=1,
        risk_rounds=1,
    )
    result = await PipelineRunner(settings, desk).analyze(request)
    assert result is not None and result.decision != "failed", result


async def run_ask(settings: Settings, market: MarketData, tally: Tally) -> None:
    models = counting({n: s.policy for n, s in ASSISTANT_AGENTS.items()}, tally)
    pipeline = AssistantPipeline(settings, market, model="rules", models=models)
    for question in QUESTIONS:
        result = await pipeline.ask(ChatRequest(question=question))
        assert result.status == "completed", result.error


async def run_algo(settings: Settings, market: MarketData, tally: Tally) -> None:
    models = counting({s.name: s.policy for s in algo_agents().all}, tally)
    lab = StrategyLab(settings, market, models=models, memory=None)
    request = AlgoRequest(
        symbol="AAPL",
        as_of=session_close(date(2012, 12, 31)),
        goal="Sharpe above 1.2 with drawdown under 15%",
        variants=2,
        iterations=1,
        memory=False,
    )
    result = await PipelineRunner(settings, lab).analyze(request)
    assert result is not None


async def run_portfolio(
    settings: Settings,
    market: MarketData,
    tally: Tally,
    *,
    quick: bool = False,
    reuse: bool = False,
    depth: Depth = "full",
) -> None:
    """The book over StockBench's window (a sample of it with ``--quick``), in this
    process, every model call counted as the provider would receive it; with ``reuse``,
    analysts' reports reused while what they read is unchanged; ``depth`` triage: the
    desk asked only where the triage says."""
    protocol, every = PROTOCOL, 1
    if quick:
        sample = {"symbols": protocol.symbols[:5], "end": date(2025, 3, 14)}
        protocol = protocol.model_copy(update=sample)
    with tempfile.TemporaryDirectory() as tmp:
        result = await evaluate_desk_book(
            settings,
            protocol,
            every=every,
            out=Path(tmp),
            workers=1,
            paper=False,
            reuse=reuse,
            depth=depth,
            wrap_model=lambda agent, model: CountingModel(agent, model, tally),
        )
    tally.per = len(result.decisions)
    updated, carried = result.manifest.get("update calls", 0), result.manifest.get("carry calls", 0)
    print(f"\nportfolio: {len(protocol.symbols)} names, every {every} sessions of "
          f"{protocol.start}..{protocol.end}: {tally.per} symbol-days, "
          f"{updated} updated and {carried} carried by the triage")  # fmt: skip


BOOKS: tuple[tuple[bool, Depth, str], ...] = (
    (False, "full", "a full desk each"),
    (True, "full", "reports reused"),
    (False, "triage", "triage"),
    (True, "triage", "triage, reports reused"),
)
Runner = Callable[[Settings, MarketData, Tally], Any]
PIPELINES: dict[str, tuple[str, Runner]] = {
    "csp": ("csp NVDA 2024-11-29", run_csp),
    "desk": ("desk AAPL 2012-03-30, 1 debate + 1 risk round", run_desk),
    "ask": (f"ask, {len(QUESTIONS)} questions", run_ask),
    "algo": ("algo AAPL to 2012-12-31, 2 variants, 1 iteration", run_algo),
    "portfolio": ("portfolio book", run_portfolio),
}


WINDOW_SYMBOL_DAYS = 1_660  # StockBench's window: 83 sessions x 20 names
PRICED = ("gpt-4o-mini", "claude-sonnet-4-5")  # two hosted models, LiteLLM's list prices


def _priced(prompt: float, completion: float) -> str:
    """What the whole window would cost at these tokens a symbol-day, by LiteLLM's price
    table as installed (no prompt caching counted)."""
    import litellm

    costs = []
    for model in PRICED:
        price = litellm.model_cost[model]
        each = prompt * price["input_cost_per_token"] + completion * price["output_cost_per_token"]
        costs.append(f"{model} ${each * WINDOW_SYMBOL_DAYS:,.0f}")
    return (f"the window's {WINDOW_SYMBOL_DAYS:,} symbol-days at these tokens, by LiteLLM "
            f"{_version()}'s prices: " + ", ".join(costs))  # fmt: skip


def _version() -> str:
    from importlib.metadata import version

    return version("litellm")


def report(name: str, title: str, tally: Tally) -> None:
    """Per agent: requests, prompt tokens (in all, the largest request, of which the tool
    schemas and the tool results carried as history) and completion tokens."""
    print(f"\n{title}")
    print(
        f"  {'agent':<24}{'requests':>9}{'prompt':>12}{'largest':>9}{'schemas':>11}"
        f"{'results':>11}{'completion':>11}"
    )
    for agent, a in sorted(tally.agents.items(), key=lambda kv: -kv[1].prompt):
        print(
            f"  {agent:<24}{a.requests:>9}{a.prompt:>12,}{a.largest:>9,}{a.tool_schemas:>11,}"
            f"{a.tool_results:>11,}{a.completion:>11,}"
        )
    requests = sum(a.requests for a in tally.agents.values())
    print(f"  {'total':<24}{requests:>9}{tally.prompt:>12,}{'':>31}{tally.completion:>11,}")
    prompt = tally.prompt / tally.per
    if tally.per > 1:
        print(f"  per symbol-day: {prompt:,.0f} prompt, {tally.completion / tally.per:,.0f} "
              f"completion, {requests / tally.per:.1f} requests")  # fmt: skip
    if name == "portfolio":
        print(f"  {_priced(prompt, tally.completion / tally.per)}")
    if name in GOALS:
        goal = GOALS[name]
        verdict = "met" if prompt < goal else "NOT met"
        print(f"  prompt tokens {prompt:,.0f} vs goal < {goal:,}: {verdict}")


async def main(tokenizer: str, only: list[str], quick: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp) / "alphadesk", memory=MemorySettings(enabled=False))
        market = build_provider(settings)
        print(f"tokens counted with LiteLLM's tokenizer for {tokenizer} (no model called)")
        for name in only:
            title, runner = PIPELINES[name]
            if name == "portfolio":  # today's figure first, then the ways to spend less
                for reuse, depth, how in BOOKS:
                    tally = Tally(tokenizer)
                    await run_portfolio(
                        settings, market, tally, quick=quick, reuse=reuse, depth=depth
                    )
                    report(name, f"{title}, {how}", tally)
                continue
            tally = Tally(tokenizer)
            await runner(settings, market, tally)
            report(name, title, tally)
    print(f"\nanchors: {ANCHORS}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokenizer", default="gpt-4o", help="model whose tokenizer counts")
    parser.add_argument("pipelines", nargs="*", help=f"some of {', '.join(PIPELINES)}; all")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="csp alone unless pipelines are named; portfolio: 5 names over 2 weeks",
    )
    args = parser.parse_args()
    unknown = sorted(set(args.pipelines) - set(PIPELINES))
    if unknown:
        parser.error(f"unknown pipelines {unknown}; choose from {', '.join(PIPELINES)}")
    everything = ["csp"] if args.quick else [p for p in PIPELINES if p != "portfolio"]
    asyncio.run(main(args.tokenizer, args.pipelines or everything, args.quick))

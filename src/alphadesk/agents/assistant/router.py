"""The router: from the catalogue of every tool, the tools, complexity and strategy.

The validator holds a decision to the catalogue and to the question: known tools only,
arguments that validate against each tool's schema, calls for DIRECT, two or more symbols
for PARALLEL, no more calls than the session allows. A violation goes back to the model
as a retry. The ``rules`` policy routes by question type and categories.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from typing import Any

from pydantic import ValidationError

from alphadesk.agent import Agent, ModelRetry, RunContext
from alphadesk.agent.errors import describe_invalid
from alphadesk.agents.assistant.conditions import (
    conditions_in,
    universe_in,
    wants_analysis,
)
from alphadesk.agents.assistant.models import (
    Classification,
    Complexity,
    PlannedToolCall,
    RouterDecision,
    Strategy,
)
from alphadesk.agents.assistant.tasks import (
    RouterTask,
)
from alphadesk.agents.spec import AgentSpec, load_prompt
from alphadesk.llm.rules import RulesPolicy, Transcript
from alphadesk.tools.catalog import ToolCatalog

__all__ = ["ROUTER", "RouteDeps", "route_by_rules", "router_agent"]

_PROMPTS = "alphadesk.agents.assistant"
_CHART = ("get_technical_indicators", "find_support_resistance", "detect_chart_patterns",
          "get_price_history")  # fmt: skip


@dataclass(frozen=True)
class RouteDeps:
    """What the router's validator checks a decision against."""

    catalog: ToolCatalog
    classification: Classification
    max_tool_calls: int


def _decision(
    tools: list[str],
    complexity: Complexity,
    strategy: Strategy,
    calls: list[tuple[str, dict[str, Any]]],
    reason: str,
) -> RouterDecision:
    return RouterDecision(
        selected_tools=list(dict.fromkeys(tools)),
        complexity=complexity,
        strategy=strategy,
        calls=[PlannedToolCall(tool=name, arguments=args) for name, args in calls],
        reason=reason,
    )


def _zero_dte(question: str) -> RouterDecision:
    text = question.lower()
    args: dict[str, Any] = {"strategy": "strangle"}
    if re.search(r"\bputs?\b", text) and "strangle" not in text:
        args["strategy"] = "put_only"
    elif re.search(r"\bcalls?\b", text) and "strangle" not in text:
        args["strategy"] = "call_only"
    if re.search(r"iron condor|defined risk|wings?", text):
        args["wing_width"] = 5.0
    if "expected move" in text:
        args["selection"] = "expected_move"
    calls = [("get_market_overview", {}), ("run_zero_dte_engine", args)]
    reason = "a 0DTE SPY trade"
    universe = universe_in(question)
    if universe is not None:
        calls.append(("run_csp_screen", {"universe": universe}))
        reason += f", and cash-secured puts screened in the {universe}"
    complexity: Complexity = "SIMPLE" if len(calls) <= 2 else "MEDIUM"
    return _decision([c for c, _ in calls], complexity, "DIRECT", calls, reason)


def _discovery(question: str) -> RouterDecision:
    """Screen on the question's conditions; then, turn by turn, what it found (or the
    closest when nothing meets them) and the analyses it asks for."""
    conditions = conditions_in(question)
    analyses = wants_analysis(question)
    tools = ["stock_screener", "get_technical_indicators"]
    tools += {"patterns": ["detect_chart_patterns"], "fibonacci": ["calculate_fib_levels"]
              }.get(analyses[0], []) if len(analyses) == 1 else []  # fmt: skip
    if len(analyses) > 1:
        tools += ["detect_chart_patterns", "calculate_fib_levels"]
    wanted = " and ".join(c.label for c in conditions) or "the question's criteria"
    reason = f"screen for {wanted}, the closest when none meets it"
    if analyses:
        reason += f", then {' and '.join(analyses)} of what it finds"
    complexity: Complexity = "COMPLEX" if analyses else "MEDIUM"
    return _decision(tools, complexity, "ITERATIVE", [], reason)


def _single(c: Classification) -> RouterDecision:
    symbol = c.symbols[0]
    wanted: list[str] = []
    if "csp" in c.categories:
        wanted.append("run_csp_desk")
    if "trade" in c.categories and "csp" not in c.categories:  # "should I sell a put" is csp
        wanted.append("run_trading_desk")
    if "technical" in c.categories:
        wanted += _CHART
    if "fundamentals" in c.categories:
        wanted.append("get_fundamentals")
    if "news" in c.categories:
        wanted.append("get_news")
    if "options" in c.categories and "csp" not in c.categories:
        wanted += ["calculate_iv_hv", "get_option_chain"]
    if not wanted or ("price" in c.categories and "get_price_history" not in wanted):
        wanted = ["get_price_history", "get_technical_indicators", *wanted]
    tools = list(dict.fromkeys(wanted))
    calls = [(name, {"symbol": symbol}) for name in tools]
    complexity: Complexity = "SIMPLE" if len(tools) <= 2 else "MEDIUM"
    return _decision(tools, complexity, "DIRECT", calls, f"facts about {symbol}, known now")


def route_by_rules(question: str, c: Classification) -> RouterDecision:
    """The offline route of a classified question."""
    if "web" in c.categories:
        return _decision(["web_search"], "SIMPLE", "DIRECT",
                         [("web_search", {"query": question})], "pages from the web")  # fmt: skip
    if c.question_type in ("greeting", "general") and not c.symbols:
        return _decision([], "SIMPLE", "DIRECT", [], "no market data needed")
    if c.question_type == "portfolio":
        return _decision(["get_positions"], "SIMPLE", "DIRECT", [("get_positions", {})],
                         "the user's positions")  # fmt: skip
    if "zero_dte" in c.categories and c.question_type == "market":
        return _zero_dte(question)
    if c.question_type == "screener":
        return _discovery(question)
    if c.question_type == "comparison":
        tools = list(_CHART[:2]) if "technical" in c.categories else [
            "get_price_history", "get_technical_indicators"]  # fmt: skip
        return _decision(tools, "MEDIUM", "PARALLEL", [(t, {}) for t in tools],
                         f"the same facts for {', '.join(c.symbols)}")  # fmt: skip
    if c.question_type == "stock_specific":
        return _single(c)
    if "deep_analysis" in c.categories:
        return _decision(["get_market_overview", "think_deeply"], "MEDIUM", "ITERATIVE", [],
                         "the market's state, then deep reasoning on it")  # fmt: skip
    return _decision(["get_market_overview"], "SIMPLE", "DIRECT",
                     [("get_market_overview", {})], "the market's state")  # fmt: skip


def _decide(t: Transcript) -> RouterDecision:
    task = t.task_as(RouterTask)
    return route_by_rules(task.question, task.classification)


def _check_arguments(catalog: ToolCatalog, call: PlannedToolCall) -> None:
    entry = catalog.get(call.tool)
    assert entry is not None
    try:
        entry.tool.arguments.model_validate(call.arguments)
    except ValidationError as exc:
        raise ModelRetry(f"arguments of {call.tool} are invalid:\n{describe_invalid(exc)}") from exc


def decision_fits(ctx: RunContext[RouteDeps], output: RouterDecision) -> RouterDecision:
    """Hold the decision to the catalogue, the classification and the call budget."""
    catalog, c = ctx.deps.catalog, ctx.deps.classification
    named = dict.fromkeys([*output.selected_tools, *(k.tool for k in output.calls)])
    unknown = [n for n in named if catalog.get(n) is None]
    if unknown:
        raise ModelRetry(f"unknown tools {unknown}; choose from: {', '.join(catalog.names)}")
    if output.strategy == "PARALLEL" and len(c.symbols) < 2:
        raise ModelRetry("PARALLEL needs two or more symbols; use DIRECT or ITERATIVE")
    if output.strategy == "DIRECT" and output.selected_tools and not output.calls:
        raise ModelRetry("DIRECT runs the listed calls: list each call with its arguments")
    planned = len(output.calls) * (len(c.symbols) if output.strategy == "PARALLEL" else 1)
    if planned > ctx.deps.max_tool_calls:
        raise ModelRetry(
            f"{planned} calls is more than the {ctx.deps.max_tool_calls} allowed; select fewer"
        )
    for call in output.calls:
        if output.strategy == "PARALLEL":
            call = call.model_copy(update={"arguments": call.arguments | {"symbol": c.symbols[0]}})
        _check_arguments(catalog, call)
    return output.model_copy(update={"selected_tools": list(named)})


router_policy = RulesPolicy(plan=[], decide=_decide, name="router")


_AGENT: Agent[RouteDeps, RouterDecision] = Agent(
    name="router",
    instructions="",  # the catalogue a question's router chooses from: router_agent
    output_type=RouterDecision,
    output_validators=(decision_fits,),
    max_tokens=600,
    max_turns=1,
    output_retries=2,
)


@functools.lru_cache(maxsize=8)
def router_agent(catalog: ToolCatalog) -> Agent[RouteDeps, RouterDecision]:
    """The router with ``catalog`` (tools, capabilities, limitations) in its instructions,
    built once per catalogue: its text lists every tool, which imports every tool."""
    system = load_prompt(_PROMPTS, "router_system").substitute(catalog=catalog.as_text(notes=True))
    return replace(_AGENT, instructions=system)


ROUTER: AgentSpec[RouteDeps, RouterDecision] = AgentSpec(
    agent=_AGENT,  # without its catalogue: a question's router is router_agent(catalog)
    policy=router_policy,
    turns={"quick": 1, "standard": 1, "deep": 1},
)

"""The seeds' checklist, offline: each question of seed 002's verification checklist and
seed 003's discovery example, and paraphrases of each, call the tools the seeds promise
and answer with the facts those tools gave (every figure traced to a tool)."""

from __future__ import annotations

import json
import re
from datetime import date

import pytest

from alphadesk.agents.assistant.conditions import conditions_in
from alphadesk.agents.assistant.router import router_agent
from alphadesk.data.calendar import session_close
from alphadesk.pipelines.assistant import ChatResult
from alphadesk.tools.catalog import tool_catalog
from tests.pipelines.assistant.conftest import Make, ask

# question -> tools the answer must call, in order of first call; text the answer holds
CHECKLIST: list[tuple[str, list[str], list[str]]] = [
    # "hello" responds with no tool calls
    ("hello", [], ["Hello!"]),
    ("hi there", [], ["Hello!"]),
    ("good morning!", [], ["Hello!"]),
    ("thanks!", [], ["Hello!"]),
    # "what's spy" calls the market tool and says what its figures are: SPY's own last
    # bundled bar (2025-03-07), observed, not the index's 2018 close / 10
    ("what's spy at", ["get_market_overview"], ["SPY 575.92", "observed", "2025-03-07"]),
    ("where is SPY trading?", ["get_market_overview"], ["SPY 575.92", "observed"]),
    ("how's the market today", ["get_market_overview"], ["S&P 500", "VIX"]),
    ("what is the VIX at", ["get_market_overview"], ["VIX 28.34"]),
    # "show positions" calls get_positions
    ("show positions", ["get_positions"], ["paper account"]),
    ("what are my positions?", ["get_positions"], ["paper account"]),
    ("how is my portfolio doing", ["get_positions"], ["paper account"]),
    ("what do I hold", ["get_positions"], ["paper account"]),
    # "find trade" calls the 0DTE engine
    ("find trade", ["get_market_overview", "run_zero_dte_engine"], ["0DTE SPY strangle"]),
    ("find me a trade", ["get_market_overview", "run_zero_dte_engine"], ["0DTE SPY"]),
    ("any trade ideas?", ["get_market_overview", "run_zero_dte_engine"], ["0DTE SPY"]),
    ("give me a trade for today", ["get_market_overview", "run_zero_dte_engine"], ["0DTE SPY"]),
    ("what should I trade today?", ["get_market_overview", "run_zero_dte_engine"], ["0DTE"]),
    # "should I trade?" gathers the market's facts, then calls think_deeply on them
    ("should I trade?", ["get_market_overview", "think_deeply"], ["Deep analysis", "VIX"]),
    ("should I trade today given current conditions?",
     ["get_market_overview", "think_deeply"], ["Deep analysis"]),
    ("is today a good day to trade?", ["get_market_overview", "think_deeply"], ["Deep"]),
    ("should I be trading right now?", ["get_market_overview", "think_deeply"], ["Deep"]),
    ("is it worth trading today?", ["get_market_overview", "think_deeply"], ["Deep"]),
]  # fmt: skip


def _tools(result: ChatResult) -> list[str]:
    called = [c.tool for c in result.tool_calls if c.tool != "lookup_symbols"]
    return list(dict.fromkeys(called))


@pytest.mark.parametrize(("question", "tools", "facts"), CHECKLIST)
async def test_checklist_question(
    make: Make, question: str, tools: list[str], facts: list[str]
) -> None:
    result, _ = await ask(make(), question)
    assert result.status == "completed", result.error
    assert _tools(result) == tools
    assert all(c.ok for c in result.tool_calls), result.failures
    for fact in facts:
        assert fact in result.answer, (fact, result.answer)
    assert result.numbers.ok, result.numbers.unverified  # no figure a tool did not give
    assert "I can only answer from tools" not in result.answer


async def test_should_i_trade_reasons_on_the_markets_figures(make: Make) -> None:
    result, _ = await ask(make(), "should I trade today?")
    think = next(c for c in result.tool_calls if c.tool == "think_deeply")
    context = json.loads(json.loads(think.arguments)["context"])
    assert context["vix"] == 28.34 and context["spy_price"] == 250.69
    assert context["spy_origin"] == "modeled"


async def test_a_trade_in_a_named_index_adds_the_csp_screen(make: Make) -> None:
    result, _ = await ask(make(), "find me a trade among Dow stocks")
    assert _tools(result) == ["get_market_overview", "run_zero_dte_engine", "run_csp_screen"]
    screen = next(c for c in result.tool_calls if c.tool == "run_csp_screen")
    assert json.loads(screen.arguments) == {"universe": "dow30"} and screen.ok
    assert "The csp_screen desk on dow30" in result.answer and result.numbers.ok
    assert "12 members screened" in result.answer  # the Dow members whose bars reach that day
    assert re.search(r"best first: [A-Z]+ 2019-01-18 [\d.]+ put for [\d.]+", result.answer)


async def test_a_trade_on_a_named_stock_goes_to_the_trading_desk(make: Make) -> None:
    result, _ = await ask(make(), "find me a trade on KO")
    assert result.route is not None and "run_trading_desk" in result.route.selected_tools
    assert "run_zero_dte_engine" not in result.route.selected_tools


DISCOVERY = [
    "Find stocks with RSI < 30 on US exchanges. For found stocks, analyze patterns and fibonacci.",
    "Which US stocks have an RSI under 30? Look at their chart patterns and Fibonacci levels.",
    "screen for stocks whose RSI is below 30, then analyse patterns and fib retracements",
    "show me oversold stocks and their patterns and fibonacci levels",
]


@pytest.mark.parametrize("question", DISCOVERY)
async def test_discovery_screens_on_the_condition_then_analyses_what_it_found(
    make: Make, question: str
) -> None:
    result, _ = await ask(make(), question)
    assert result.route is not None
    assert (result.route.strategy, result.route.complexity) == ("ITERATIVE", "COMPLEX")
    calls = [(c.tool, json.loads(c.arguments)) for c in result.tool_calls
             if c.tool != "lookup_symbols"]  # fmt: skip
    tool, first = calls[0]
    assert tool == "stock_screener" and first["max_rsi"] == 30.0  # the stated condition
    # The symbol the screen found (RRC, the one below 30 on 2018-12-31) is analysed.
    assert ("detect_chart_patterns", {"symbol": "RRC"}) in calls
    assert ("calculate_fib_levels", {"symbol": "RRC"}) in calls
    assert "1 meets RSI(14) < 30: RRC (RSI(14) 23.1)" in result.answer
    assert "RRC patterns" in result.answer or "RRC: no chart pattern" in result.answer
    assert "RRC Fibonacci levels" in result.answer and result.numbers.ok


CLOSEST = [
    "Find stocks with RSI < 20 on US exchanges. For found stocks, analyze patterns and fibonacci.",
    "which stocks have an RSI below 20? analyse the patterns and fibonacci of what you find",
    "list stocks with RSI less than 20 with their patterns and fib levels",
]


@pytest.mark.parametrize("question", CLOSEST)
async def test_discovery_with_no_match_names_the_closest_and_analyses_it(
    make: Make, question: str
) -> None:
    result, _ = await ask(make(), question)
    calls = [(c.tool, json.loads(c.arguments)) for c in result.tool_calls
             if c.tool != "lookup_symbols"]  # fmt: skip
    assert [t for t, _ in calls[:2]] == ["stock_screener", "stock_screener"]
    assert calls[0][1]["max_rsi"] == 20.0 and "max_rsi" not in calls[1][1]
    assert calls[1][1]["sort_by"] == "rsi" and calls[1][1]["ascending"] is True
    lead = result.answer.splitlines()[0]
    assert "none has RSI(14) < 20" in lead
    closest = re.search(r"The closest is (\w+) \(RSI\(14\) ([\d.]+)\)", lead)
    assert closest is not None, lead
    symbol, value = closest.group(1), float(closest.group(2))
    assert symbol == "RRC" and value == 23.1  # the lowest RSI of the universe, not below 20
    analysed = {t for t, args in calls[2:] if args.get("symbol") == symbol}
    assert analysed == {"get_technical_indicators", "detect_chart_patterns",
                        "calculate_fib_levels"}  # fmt: skip
    assert result.numbers.ok


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("stocks with RSI(14) below 25.5 and price above 50", ["RSI(14) < 25.5", "price > 50"]),
        ("RSI of less than 30", ["RSI(14) < 30"]),
        ("stocks with an RSI above 70", ["RSI(14) > 70"]),
        ("overbought names", ["RSI(14) > 70"]),
        ("RSI>80 please", ["RSI(14) > 80"]),
        ("how does NVDA look", []),
    ],
)
def test_conditions_are_read_from_the_question(question: str, expected: list[str]) -> None:
    assert [c.label for c in conditions_in(question)] == expected


def test_a_live_router_is_told_the_same_tools_for_each_kind_of_question() -> None:
    prompt = router_agent(tool_catalog()).instructions
    assert isinstance(prompt, str)
    for phrase in ("get_market_overview", "get_positions", "run_zero_dte_engine",
                   "run_csp_screen", "think_deeply", "max_rsi", "calculate_fib_levels",
                   "detect_chart_patterns", "no tools"):  # fmt: skip
        assert phrase in prompt, phrase


async def test_an_answer_presents_no_ended_pattern_as_current(make: Make) -> None:
    as_of = session_close(date(2018, 12, 28))
    result, _ = await ask(make(), "what chart patterns does NVDA show?", as_of=as_of)
    line = next(x for x in result.answer.splitlines() if "pattern" in x)
    current, _, past = line.partition("No longer in force:")
    assert "NVDA: no chart pattern standing at 2018-12-28" in current
    assert "279.1" not in current and "double_bottom" not in current
    assert "double_bottom invalidated on 2018-10-10" in past and result.numbers.ok


@pytest.mark.parametrize("question", ["what's spy at", "find me a trade", "should I trade?"])
async def test_without_data_the_answer_says_what_is_missing_and_invents_nothing(
    make: Make, question: str
) -> None:
    before_the_data = session_close(date(1985, 1, 2))  # the index's bars start in 1999
    result, _ = await ask(make(), question, as_of=before_the_data)
    assert result.status == "completed"
    assert "SPY unavailable" in result.answer and "Not available: ^GSPC bars" in result.answer
    assert "1999-01-04" in result.answer  # where the data starts, as the provider said
    assert re.search(r"SPY \d", result.answer) is None and result.numbers.ok
    if question == "find me a trade":
        assert "Could not get run_zero_dte_engine: NoData" in result.answer

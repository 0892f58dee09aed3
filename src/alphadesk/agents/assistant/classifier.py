"""The classifier: question type, symbols resolved against the providers, categories.

An LLM finds the mentions and calls ``lookup_symbols``; the validator holds its symbols to
what the providers resolve (an unknown one goes back as a retry naming close matches).
The ``rules`` policy finds tickers and company names with patterns, resolves them with the
same tool and classifies by keywords.
"""

from __future__ import annotations

import re
from typing import Any

from alphadesk.agent import Agent, ModelRetry, RunContext
from alphadesk.agents.assistant.conditions import (
    asks_for_a_trade,
    asks_whether_to_trade,
    conditions_in,
)
from alphadesk.agents.assistant.models import (
    AssetClass,
    Category,
    Classification,
    QuestionType,
    UnresolvedSymbol,
)
from alphadesk.agents.assistant.tasks import (
    ClassifierTask,
)
from alphadesk.agents.spec import AgentSpec, load_prompt
from alphadesk.llm.rules import PlannedCall, RulesPolicy, Transcript
from alphadesk.tools.assistant.symbols import SYMBOL_TOOLS, resolve_symbols
from alphadesk.tools.deps import ToolDeps

__all__ = ["CLASSIFIER", "classify_by_rules", "question_of"]

_PROMPTS = "alphadesk.agents.assistant"
_TICKER = re.compile(r"(?<![\w^$&])(\$?[A-Z]{1,5}(?:[.-][A-Z]{1,3})?|\^[A-Z]{2,5})(?![\w&])")
_WORD = re.compile(r"[a-z][a-z.&-]{3,}")
_NOT_TICKERS = frozenset(
    re.findall(
        r"\S+",
        "I A AM PM ET UTC US USA OK AI IV HV RSI MACD SMA EMA ATR ADX PE EPS PNL P L YTD Q DTE "
        "ETF CEO CFO IPO NYSE API FAQ CSP OTM ITM ATM BUY SELL PUT CALL VS",
    )
)
_NOT_NAMES = frozenset(
    re.findall(
        r"\S+",
        "what which where when with that this have does look like about some more most much "
        "bank company group index general international united health best stock stocks "
        "market markets price prices today trade trades option options think should would "
        "compare versus positions portfolio strangle technically technical chart news",
    )
)
_MARKET = frozenset({"SPY", "^GSPC", "^VIX", "^IXIC"})  # the market, not a stock
_GREETING = re.compile(
    r"^\s*(hi|hello|hey|howdy|yo|good (morning|afternoon|evening)|thanks?|thank you)"
    r"\b[\s!.,?]*(there)?[\s!.,?]*$",
    re.IGNORECASE,
)
_KEYWORDS: dict[Category, str] = {
    "technical": r"technical|chart|trend|rsi|macd|support|resistance|pattern|moving average"
    r"|indicator|\blook",
    "price": r"\bprice|trading at|quote|how much|\bclose",
    "fundamentals": r"fundamental|earnings|revenue|margin|valuation|balance sheet|profit",
    "news": r"\bnews|headline",
    "options": r"option|\bputs?\b|\bcalls?\b|premium|implied vol",
    "zero_dte": r"\b0\s?dte|zero[- ]dte|same[- ]day|strangle|iron condor",
    "csp": r"cash[- ]secured|\bcsp\b|sell (a )?put|wheel",
    "trade": r"should i (buy|sell)\b(?! (an? )?(puts?|calls?|options?|strangle))"
    r"|buy,? (hold,? )?or sell|trading desk",
    "positions": r"\bmy (positions?|portfolio|holdings|account)|\bpositions\b|portfolio|holdings"
    r"|account value|\bp&l\b|\bpnl\b|what do i (hold|own)|\bam i (up|down)\b",
    "market": r"\bmarket\b|\bspy\b|\bvix\b|s&p|\btoday\b|conditions",
    "screening": r"\bscreen|(find|show|list|give)( me)? (some |all |the )?(\w+ )?stocks"
    r"|which (\w+ )?stocks|stocks (with|that|whose|where|having)|top stocks",
    "deep_analysis": r"\bshould i\b|\brisk|\bthink|worth it|\bwhy\b",
    "web": r"search the web|\bonline\b|\bweb\b",
}


def question_of(t: Transcript) -> str:
    return t.task_as(ClassifierTask).question.strip()


def _mentions(question: str) -> tuple[list[str], list[str]]:
    """Ticker-like tokens, and longer words that might be company names."""
    tickers = [
        m.lstrip("$") for m in _TICKER.findall(question) if m.lstrip("$") not in _NOT_TICKERS
    ]
    lowered = question.lower().replace("s&p 500", "s&p500")
    words = [w.strip(".-") for w in _WORD.findall(lowered) if w.strip(".-") not in _NOT_NAMES]
    if "s&p500" in lowered:
        tickers.append("S&P 500")
    if re.search(r"\bspy\b", lowered) and "SPY" not in tickers:
        tickers.append("SPY")  # the ETF in lower case ("what's spy at") is the ticker
    return tickers, words


def _lookup(t: Transcript) -> list[PlannedCall]:
    tickers, words = _mentions(question_of(t))
    return [("lookup_symbols", {"queries": tickers + words})] if tickers or words else []


def _categories(question: str) -> list[Category]:
    """The categories the question's words name, and those its intent implies: a
    condition to screen on, a trade to find (the 0DTE engine), whether to trade at all
    (the market's facts, then deep reasoning)."""
    text = question.lower()
    found = [c for c, pattern in _KEYWORDS.items() if re.search(pattern, text)]
    implied: list[Category] = []
    if conditions_in(question):
        implied += ["screening", "technical"]
    if asks_for_a_trade(question):
        implied.append("zero_dte")
    if asks_whether_to_trade(question):
        implied += ["market", "deep_analysis"]
    return [c for c in _KEYWORDS if c in found or c in implied]


def _question_type(question: str, symbols: list[str], categories: list[Category]) -> QuestionType:
    if _GREETING.match(question) and not symbols:
        return "greeting"
    if "positions" in categories:
        return "portfolio"
    stocks = [s for s in symbols if s not in _MARKET]
    if "zero_dte" in categories and not stocks:
        return "market"
    if "screening" in categories:
        return "screener"
    if len(symbols) >= 2:
        return "comparison"
    if len(symbols) == 1 and symbols[0] not in ("SPY", "^GSPC", "^VIX"):
        return "stock_specific"
    if "market" in categories or symbols:
        return "market"
    return "general"


def _asset_class(kinds: list[str | None]) -> AssetClass:
    if not kinds:
        return "none"
    crypto = [k == "crypto" for k in kinds]
    return "crypto" if all(crypto) else "mixed" if any(crypto) else "stock"


def classify_by_rules(t: Transcript) -> Classification:
    """Classify the task's question from its keywords and the symbols looked up."""
    question = question_of(t)
    tickers, _ = _mentions(question)
    lookup = t.results.get("lookup_symbols", [None])[-1]
    matches: list[dict[str, Any]] = lookup.get("matches", []) if isinstance(lookup, dict) else []
    symbols = [m["symbol"] for m in matches if m.get("symbol")]
    unresolved = [
        UnresolvedSymbol(text=m["query"], close_matches=m.get("close_matches") or [])
        for m in matches
        if not m.get("symbol") and m["query"] in tickers
    ]
    symbols = list(dict.fromkeys(symbols))
    categories = _categories(question)
    if asks_for_a_trade(question) and any(s not in _MARKET for s in symbols):
        # A trade on a named stock is the trading desk's, not the SPY engine's.
        kept: list[Category] = [c for c in categories if c != "zero_dte"]
        categories = [*kept, "trade"]
    kinds = [m.get("asset_type") for m in matches if m.get("symbol")]
    return Classification(
        question_type=_question_type(question, symbols, categories),
        symbols=symbols,
        unresolved=unresolved,
        categories=categories,
        asset_class=_asset_class(kinds),
    )


async def symbols_resolve(ctx: RunContext[ToolDeps], output: Classification) -> Classification:
    """Hold the classification's symbols to what the providers resolve (canonical form)."""
    if not output.symbols:
        return output
    matches = resolve_symbols(ctx.deps.market, output.symbols)
    unknown = [m for m in matches if m.symbol is None]
    if unknown:
        listed = "; ".join(
            f"{m.query} (close matches: {', '.join(m.close_matches) or 'none'})" for m in unknown
        )
        raise ModelRetry(
            f"these symbols are not known to the data providers: {listed}. Use the tickers "
            "lookup_symbols returned, or move the mention to unresolved."
        )
    canonical = list(dict.fromkeys(m.symbol for m in matches if m.symbol))
    return output.model_copy(update={"symbols": canonical})


classifier_policy = RulesPolicy(plan=[_lookup], decide=classify_by_rules, name="classifier")

CLASSIFIER: AgentSpec[ToolDeps, Classification] = AgentSpec(
    agent=Agent(
        name="classifier",
        max_tokens=400,
        instructions=load_prompt(_PROMPTS, "classifier_system").template,
        output_type=Classification,
        toolset=SYMBOL_TOOLS,
        output_validators=(symbols_resolve,),
        max_turns=2,
    ),
    policy=classifier_policy,
    turns={"quick": 2, "standard": 2, "deep": 3},
)

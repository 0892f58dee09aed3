"""What a question asks for, read from its words: screening conditions (indicator,
comparison, threshold), the stock universe it names, and whether it asks for a trade or
whether to trade at all.

The ``rules`` agents read questions through here, so "RSI < 30", "RSI below 30", "an RSI
under 30" and "oversold" are one condition, and "find me a trade" and "any trade ideas?"
one intent; an LLM reads the same question itself.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

__all__ = [
    "Condition",
    "asks_for_a_trade",
    "asks_whether_to_trade",
    "conditions_in",
    "screener_arguments",
    "universe_in",
    "wants_analysis",
]

Indicator = Literal["rsi", "price"]
Comparison = Literal["<", ">"]
Universe = Literal["sp500", "nasdaq100", "dow30"]

_BELOW = r"<=?|below|under|less than|lower than|beneath|at most|no more than|smaller than"
_ABOVE = r">=?|above|over|more than|greater than|higher than|at least|exceeding"
_INDICATORS: dict[Indicator, str] = {
    "rsi": r"rsi(?:\s*\(?\s*14\s*\)?)?",
    "price": r"price|priced|trading",
}
_THRESHOLD = r"\$?(\d+(?:\.\d+)?)"
_WORDS: dict[str, tuple[Indicator, Comparison, float]] = {
    "oversold": ("rsi", "<", 30.0),
    "overbought": ("rsi", ">", 70.0),
}
_UNIVERSES: dict[Universe, str] = {
    "sp500": r"s\s?&\s?p(?:\s?500)?|sp\s?500|spx",
    "nasdaq100": r"nasdaq[- ]?100|ndx|nasdaq",
    "dow30": r"\bdow(?:\s?30| jones)?\b|\bdjia\b",
}
_FIND_TRADE = re.compile(
    r"\b(find|get|give|show|suggest|propose|look for|search for|need|want|recommend)\b"
    r"[\w\s,']{0,20}?\btrades?\b"
    r"|\b(any|some|a few|best|good)\s+trades?\b"
    r"|\btrade\s+(ideas?|opportunit\w*|setups?|proposals?|candidates?)"
    r"|\bwhat\s+(should|can|could|would)\s+i\s+trade"
    r"|\bwhat(?:'s| is| are)\s+(a\s+)?(good\s+)?trades?\b",
    re.IGNORECASE,
)
_SHOULD_TRADE = re.compile(
    r"(?<!what )(?<!which )\b(should|shall|can|could)\s+i\s+(be\s+)?(trade|trading)\b"
    r"|\bis\s+(it|today|now|this)\s+(a\s+)?(good|bad|right|safe)\s+(day|time|moment)\s+"
    r"(to|for)\s+trad"
    r"|\b(worth|wise|safe|smart)\s+(to\s+)?trad(e|ing)\b"
    r"|\btrade\s+or\s+(sit|stay|wait)",
    re.IGNORECASE,
)
_ANALYSIS = {
    "patterns": re.compile(r"pattern|formation|double (top|bottom)|head and shoulders", re.I),
    "fibonacci": re.compile(r"fibonacci|\bfibs?\b|retracement", re.I),
}


class Condition(BaseModel):
    """One screening condition, e.g. RSI(14) below 30."""

    indicator: Indicator
    comparison: Comparison
    threshold: float = Field(ge=0)

    def holds(self, value: float | None) -> bool:
        if value is None:
            return False
        return value < self.threshold if self.comparison == "<" else value > self.threshold

    def distance(self, value: float | None) -> float:
        """How far ``value`` is from meeting the condition (0 when it does)."""
        if value is None:
            return float("inf")
        gap = value - self.threshold if self.comparison == "<" else self.threshold - value
        return max(gap, 0.0)

    @property
    def label(self) -> str:
        name = {"rsi": "RSI(14)", "price": "price"}[self.indicator]
        return f"{name} {self.comparison} {self.threshold:g}"


def conditions_in(question: str) -> list[Condition]:
    """Every condition the question states, in the order written."""
    text = question.lower()
    found: list[tuple[int, Condition]] = []
    for indicator, name in _INDICATORS.items():
        sides: tuple[tuple[str, Comparison], ...] = ((_BELOW, "<"), (_ABOVE, ">"))
        for words, comparison in sides:
            pattern = rf"\b(?:{name})\s*(?:of\s+|is\s+|at\s+|value\s+)?(?:{words})\s*{_THRESHOLD}"
            for match in re.finditer(pattern, text):
                value = float(match.group(1))
                if indicator == "rsi" and value > 100:
                    continue
                condition = Condition(indicator=indicator, comparison=comparison, threshold=value)
                found.append((match.start(), condition))
    for word, (indicator, comparison, value) in _WORDS.items():
        at = text.find(word)
        if at >= 0 and not any(c.indicator == indicator for _, c in found):
            found.append((at, Condition(indicator=indicator, comparison=comparison,
                                        threshold=value)))  # fmt: skip
    return [c for _, c in sorted(found, key=lambda item: item[0])]


def screener_arguments(conditions: list[Condition]) -> dict[str, float]:
    """``stock_screener`` arguments that apply ``conditions``."""
    arguments: dict[str, float] = {}
    for c in conditions:
        bound = "max" if c.comparison == "<" else "min"
        arguments[f"{bound}_{c.indicator}"] = c.threshold
    return arguments


def universe_in(question: str) -> Universe | None:
    """The stock index the question names as its universe, if any."""
    text = question.lower()
    for universe, pattern in _UNIVERSES.items():
        if re.search(pattern, text):
            return universe
    return None


def asks_for_a_trade(question: str) -> bool:
    """Whether the question asks for a trade: "find me a trade", "any trade ideas?"."""
    return bool(_FIND_TRADE.search(question)) and not asks_whether_to_trade(question)


def asks_whether_to_trade(question: str) -> bool:
    """Whether it asks if trading is wise: "should I trade?", "a good day to trade?"."""
    return bool(_SHOULD_TRADE.search(question))


def wants_analysis(question: str) -> list[str]:
    """The analyses a discovery question asks of what it finds: patterns, fibonacci."""
    return [name for name, pattern in _ANALYSIS.items() if pattern.search(question)]

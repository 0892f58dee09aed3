"""What the assistant's agents produce: a classification of the question and a route."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from alphadesk.agents.bounds import Name, Phrase

__all__ = [
    "TURN_BUDGET",
    "AssetClass",
    "Category",
    "Classification",
    "Complexity",
    "PlannedToolCall",
    "QuestionType",
    "RouterDecision",
    "Strategy",
    "UnresolvedSymbol",
]

QuestionType = Literal[
    "greeting", "general", "stock_specific", "comparison", "screener", "portfolio", "market"
]
Category = Literal[
    "price",
    "technical",
    "fundamentals",
    "news",
    "options",
    "zero_dte",
    "csp",
    "trade",
    "positions",
    "market",
    "screening",
    "deep_analysis",
    "web",
]
AssetClass = Literal["stock", "crypto", "mixed", "none"]
Complexity = Literal["SIMPLE", "MEDIUM", "COMPLEX"]
Strategy = Literal["DIRECT", "ITERATIVE", "PARALLEL"]

TURN_BUDGET: dict[str, int] = {"SIMPLE": 2, "MEDIUM": 4, "COMPLEX": 6}
"""Model turns an ITERATIVE loop may take before it must answer, per complexity."""


class UnresolvedSymbol(BaseModel):
    text: Phrase = Field(description="The mention as the user wrote it.")
    close_matches: list[Name] = Field(
        default_factory=list, max_length=8, description="Symbols to offer."
    )


class Classification(BaseModel):
    """What kind of question this is and what it is about."""

    question_type: QuestionType = Field(
        description="greeting, general (no market data needed), stock_specific (one "
        "symbol), comparison (two or more), screener (find symbols), portfolio (the "
        "user's positions) or market (the market as a whole, SPY, VIX, 0DTE trades)."
    )
    symbols: list[Name] = Field(
        default_factory=list,
        max_length=20,
        description="Resolved tickers, as lookup_symbols gave them.",
    )
    unresolved: list[UnresolvedSymbol] = Field(default_factory=list, max_length=10)
    categories: list[Category] = Field(
        default_factory=list, max_length=13, description="What the answer needs: price, ..."
    )
    asset_class: AssetClass = Field("none", description="stock, crypto, mixed or none.")


class PlannedToolCall(BaseModel):
    tool: Name = Field(description="A tool name from the catalogue.")
    arguments: dict[str, Any] = Field(
        default_factory=dict,
        description="Its arguments. For PARALLEL, leave out symbol: each symbol fills it.",
    )


class RouterDecision(BaseModel):
    """Which tools answer the question and how much work it needs."""

    selected_tools: list[Name] = Field(
        default_factory=list, max_length=12, description="Tool names; empty for none."
    )
    complexity: Complexity = Field(description="SIMPLE (1-2 tools), MEDIUM (3-5), COMPLEX.")
    strategy: Strategy = Field(
        description="DIRECT: run the calls once, in parallel, then answer. ITERATIVE: a loop "
        "where each turn's results decide the next calls. PARALLEL: the calls per symbol."
    )
    calls: list[PlannedToolCall] = Field(
        default_factory=list, max_length=12, description="For DIRECT and PARALLEL: the calls."
    )
    reason: Phrase = Field("", description="Why, in a sentence.")

    @property
    def max_turns(self) -> int:
        return TURN_BUDGET[self.complexity]

"""The ``rules`` answer writer's discovery loop (seed 003's worked example).

Turns::

    turn 1: stock_screener on the question's conditions (RSI(14) < 30 -> max_rsi=30)
    turn 2: what matched, looked at closer; or, when nothing did, the screen again without
            the conditions, ranked by the first one: the closest symbol first
    turn 3: the analyses the question asks of the match or the closest (chart patterns,
            Fibonacci levels), with its indicators
    then the answer: what matched or that none did and which came closest, and the analyses.
"""

from __future__ import annotations

from typing import Any

from alphadesk.agents.assistant.conditions import (
    Condition,
    conditions_in,
    screener_arguments,
    wants_analysis,
)
from alphadesk.llm.rules import PlannedCall, Transcript

__all__ = ["MATCHES_ANALYSED", "discovery_lead", "discovery_step", "picked"]

MATCHES_ANALYSED = 2  # matches whose patterns and levels are analysed
_LOOKED_AT = 3  # matches whose indicators are read
_SCREENED = 10
_ANALYSIS_TOOLS = {"patterns": "detect_chart_patterns", "fibonacci": "calculate_fib_levels"}
_FIELDS = {"rsi": "rsi_14", "price": "price"}


def _ranking(conditions: list[Condition]) -> dict[str, Any]:
    """Screener order that puts the symbols nearest the first condition first."""
    if not conditions:
        return {"trend": "up"}
    first = conditions[0]
    return {"sort_by": first.indicator, "ascending": first.comparison == "<"}


def _rows(screen: Any) -> list[dict[str, Any]]:
    return screen.get("results", []) if isinstance(screen, dict) else []


def picked(question: str, screens: list[Any]) -> tuple[list[str], bool]:
    """The symbols to analyse and whether they meet the conditions (False: the closest)."""
    matched = [r["symbol"] for r in _rows(screens[0])] if screens else []
    if matched or not conditions_in(question):
        return matched[:MATCHES_ANALYSED], bool(matched)
    closest = [r["symbol"] for r in _rows(screens[-1])] if len(screens) > 1 else []
    return closest[:1], False


def discovery_step(t: Transcript, question: str) -> list[PlannedCall]:
    """The calls of turn ``t.turn`` of the discovery loop ([] when it is done)."""
    conditions = conditions_in(question)
    screens = t.results.get("stock_screener", [])
    if t.turn == 0:
        arguments = screener_arguments(conditions) | _ranking(conditions) | {"limit": _SCREENED}
        return [("stock_screener", arguments)]
    if t.turn == 1:
        matched = [r["symbol"] for r in _rows(screens[0])]
        if not matched and conditions:
            return [("stock_screener", _ranking(conditions) | {"limit": _LOOKED_AT})]
        return [("get_technical_indicators", {"symbol": s}) for s in matched[:_LOOKED_AT]]
    if t.turn == 2:
        symbols, meet = picked(question, screens)
        tools = [_ANALYSIS_TOOLS[a] for a in wants_analysis(question)]
        if tools and not meet:
            tools.insert(0, "get_technical_indicators")  # the closest one's own figures
        return [(tool, {"symbol": s}) for s in symbols for tool in tools]
    return []


def _value(row: dict[str, Any], condition: Condition) -> str:
    value = row.get(_FIELDS[condition.indicator])
    return "unknown" if value is None else f"{value:g}"


def _figures(row: dict[str, Any], conditions: list[Condition]) -> str:
    return "; ".join(f"{c.label.split()[0]} {_value(row, c)}" for c in conditions)


def discovery_lead(question: str, screens: list[Any]) -> str:
    """The answer's first line: what met the conditions, or that nothing did and what came
    closest, with the figures the screen gave ("" for a screen without conditions)."""
    conditions = conditions_in(question)
    if not conditions or not screens or not isinstance(screens[0], dict):
        return ""
    first = screens[0]
    rows = _rows(first)
    asked = " and ".join(c.label for c in conditions)
    scope = f"Of {first.get('evaluated')} symbols screened at {str(first.get('as_of'))[:10]}"
    if rows:
        listed = ", ".join(f"{r['symbol']} ({_figures(r, conditions)})" for r in rows)
        verb = "meets" if first.get("matched") == 1 else "meet"
        return f"{scope}, {first.get('matched')} {verb} {asked}: {listed}."
    lead = f"{scope}, none has {asked}."
    closest = _rows(screens[-1]) if len(screens) > 1 else []
    if closest:
        ranked = conditions[:1]
        lead += f" The closest is {closest[0]['symbol']} ({_figures(closest[0], ranked)})"
        others = ", ".join(f"{r['symbol']} ({_figures(r, ranked)})" for r in closest[1:])
        lead += f", then {others}." if others else "."
    return lead

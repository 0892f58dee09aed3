"""The desk's fact sheet: every number the analysts established, by name.

After the analysts report, the desk flattens their figures into one sheet
(``market.rsi_14``, ``news.sentiment_score``...). Researchers, the trader, the risk
analysts and the judge cite it; :func:`citation_problems` checks each citation, so an
argument cannot rest on a number nobody measured.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from alphadesk.agents.desk.models import AnalystReport, Evidence, MarketReport

__all__ = [
    "briefing",
    "citation_problems",
    "fact_sheet",
    "matches",
    "situation_text",
]

_REL_TOLERANCE = 0.005
_ABS_TOLERANCE = 0.011  # figures are quoted rounded to 2 decimals
_LEVELS = 3


def matches(stated: float, actual: float) -> bool:
    """Whether a quoted number is the measured one, up to the rounding of a quote."""
    return abs(stated - actual) <= max(_ABS_TOLERANCE, _REL_TOLERANCE * abs(actual))


def fact_sheet(reports: Mapping[str, AnalystReport]) -> dict[str, float]:
    """Every analyst's figures and score under ``<analyst>.<name>``, with the market's
    price levels (``market.support_1`` is the nearest support)."""
    sheet: dict[str, float] = {}
    for analyst, report in sorted(reports.items()):  # not the order the analysts finished in
        sheet[f"{analyst}.score"] = report.score
        sheet |= {f"{analyst}.{name}": value for name, value in report.figures.items()}
        if isinstance(report, MarketReport):
            sheet[f"{analyst}.current_price"] = report.current_price
            for i, level in enumerate(report.support_levels[:_LEVELS], start=1):
                sheet[f"{analyst}.support_{i}"] = level
            for i, level in enumerate(report.resistance_levels[:_LEVELS], start=1):
                sheet[f"{analyst}.resistance_{i}"] = level
    return sheet


def briefing(reports: Mapping[str, AnalystReport]) -> dict[str, dict[str, Any]]:
    """What later stages read of each analyst: signal, score, confidence, summary, the
    evidence with fact-sheet names, and what was missing."""
    return {
        analyst: {
            "signal": report.signal,
            "score": report.score,
            "confidence": report.confidence,
            "summary": report.summary,
            "evidence": [
                e.model_copy(update={"fact": f"{analyst}.{e.fact}"}).model_dump()
                for e in report.evidence
            ],
            "missing": report.missing,
        }
        for analyst, report in sorted(reports.items())  # whatever order they finished in
    }


def situation_text(reports: Mapping[str, AnalystReport]) -> str:
    """The situation as memory stores and compares it: each analyst's signal and
    evidence, without the symbol or the date, so similar setups on other days match."""
    lines = []
    for analyst, report in sorted(reports.items()):
        points = "; ".join(f"{e.fact} {e.value:g} ({e.lean}: {e.reading})" for e in report.evidence)
        lines.append(
            f"{analyst}: {report.signal} (score {report.score:+.2f}, confidence "
            f"{report.confidence:.2f})" + (f": {points}" if points else ": no data")
        )
    return "\n".join(lines)


def citation_problems(evidence: Iterable[Evidence], facts: Mapping[str, float]) -> list[str]:
    """What is wrong with a list of citations of ``facts`` (empty when all are right)."""
    problems = []
    for item in evidence:
        if item.fact not in facts:
            known = ", ".join(sorted(facts)[:40])
            problems.append(f"{item.fact!r} is not on the fact sheet (it has: {known})")
        elif not matches(item.value, facts[item.fact]):
            problems.append(f"{item.fact} is {facts[item.fact]:g}, not {item.value:g}")
    return problems

"""The research swarm: 15 subagents from one table and one factory, three domain
synthesizers from one factory, and the research leader who writes the brief.

Each subagent row names its domain, its focus, the tool calls it makes and the reader its
rules policy applies to them. Data a tool lacks (fundamentals, news, social and insider
data offline) comes back as ``missing``, with no finding: the fact sheet's signal is then
``unknown``, not neutral.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from alphadesk.agent import Agent, Toolset
from alphadesk.agents.algo.models import (
    Approach,
    Domain,
    FactSheet,
    Finding,
    ResearchBrief,
    ResearchReport,
)
from alphadesk.agents.algo.readers import READERS
from alphadesk.agents.algo.tasks import LeaderTask, SubagentTask, SynthesizerTask
from alphadesk.agents.bounds import at_most
from alphadesk.agents.spec import AgentSpec, load_prompt
from alphadesk.llm.rules import PlannedCall, RulesPolicy, Transcript
from alphadesk.tools.chart import CHART_TOOLS
from alphadesk.tools.deps import ToolDeps
from alphadesk.tools.fundamentals import get_fundamentals
from alphadesk.tools.options.chain import calculate_iv_hv
from alphadesk.tools.research import get_analyst_ratings, get_news, get_sec_filings
from alphadesk.tools.social import get_social_sentiment

__all__ = [
    "DOMAINS",
    "LEADER",
    "SUBAGENTS",
    "Subagent",
    "research_agents",
    "research_subagent",
    "synthesizer",
]

_PKG = "alphadesk.agents.algo"
DOMAINS: tuple[Domain, ...] = ("technical", "fundamental", "sentiment")
_TOOLS = {
    tool.name: tool
    for tool in [
        *CHART_TOOLS.only(
            "get_technical_indicators", "get_price_history", "detect_chart_patterns"
        ).tools,
        get_fundamentals,
        get_sec_filings,
        get_news,
        get_social_sentiment,
        get_analyst_ratings,
        calculate_iv_hv,
    ]
}


@dataclass(frozen=True)
class Subagent:
    """One row of the swarm: who, in which domain, looking at what, with which calls."""

    name: str
    domain: Domain
    focus: str
    calls: tuple[tuple[str, dict[str, Any]], ...]


def _row(
    name: str, domain: Domain, focus: str, *calls: str | tuple[str, dict[str, Any]]
) -> Subagent:
    planned = tuple(c if isinstance(c, tuple) else (c, {}) for c in calls)
    return Subagent(name, domain, focus, planned)


SUBAGENTS: tuple[Subagent, ...] = (
    _row("trend", "technical", "moving averages, trend strength (ADX)", "get_technical_indicators"),
    _row("momentum", "technical", "RSI, MACD, stochastics", "get_technical_indicators"),
    _row(
        "volatility",
        "technical",
        "Bollinger bands, ATR, volatility regime",
        "get_technical_indicators",
    ),
    _row(
        "volume",
        "technical",
        "volume against its average, accumulation",
        ("get_price_history", {"period": "3mo"}),
    ),
    _row("patterns", "technical", "chart and candlestick patterns", "detect_chart_patterns"),
    _row("metrics", "fundamental", "revenue, earnings, margins", "get_fundamentals"),
    _row("valuation", "fundamental", "P/E, P/S, P/B", "get_fundamentals"),
    _row("balance_sheet", "fundamental", "liquidity and leverage", "get_fundamentals"),
    _row("cash_flow", "fundamental", "operating and free cash flow", "get_fundamentals"),
    _row("industry", "fundamental", "filings and the company's sector news", "get_sec_filings"),
    _row("news", "sentiment", "news headlines and their tone", "get_news"),
    _row("social", "sentiment", "social-media mood", "get_social_sentiment"),
    _row("analyst", "sentiment", "rating changes and price targets", "get_analyst_ratings"),
    _row(
        "options_flow",
        "sentiment",
        "implied against realised volatility, option flow",
        "calculate_iv_hv",
    ),
    _row("insider", "sentiment", "insider filings (form 4)", ("get_sec_filings", {"forms": ["4"]})),
)


def _gather(row: Subagent, t: Transcript) -> list[PlannedCall]:
    symbol = t.task_as(SubagentTask).symbol
    return [(tool, {"symbol": symbol, **args}) for tool, args in row.calls]


def _report(row: Subagent, t: Transcript) -> ResearchReport:
    findings, quality, missing = READERS[row.name](t)
    confidence = round(sum(f.confidence for f in findings) / len(findings), 2) if findings else 0.0
    return ResearchReport(
        agent=row.name,
        domain=row.domain,
        specialization=row.focus,
        findings=findings,
        confidence=confidence,
        data_quality=quality,
        missing=at_most(missing),
    )


def research_subagent(row: Subagent) -> AgentSpec[ToolDeps, ResearchReport]:
    """The subagent of one row: the same prompt, output and policy shape for all 15."""
    instructions = load_prompt(_PKG, "subagent_system").substitute(
        name=row.name, domain=row.domain, focus=row.focus
    )
    tools = [_TOOLS[tool] for tool in dict.fromkeys(tool for tool, _ in row.calls)]
    return AgentSpec(
        agent=Agent(
            name=row.name,
            max_tokens=1000,
            instructions=instructions,
            output_type=ResearchReport,
            toolset=Toolset.of(f"algo_{row.name}", tools),
        ),
        policy=RulesPolicy(
            plan=[partial(_gather, row)], decide=partial(_report, row), name=row.name
        ),
        turns={"quick": 2, "standard": 4, "deep": 6},
    )


# -- domain synthesizers ---------------------------------------------------------------

_APPROACH_OF_TREND = {"strong": "trend", "moderate": "momentum", "weak": "mean_reversion"}


def _weighted_signal(findings: list[Finding]) -> tuple[str, float]:
    votes: dict[str, float] = {}
    for f in findings:
        votes[f.signal] = votes.get(f.signal, 0.0) + f.confidence
    total = sum(votes.values())
    if not votes or total == 0:
        return ("unknown", 0.0) if not votes else (findings[0].signal, 0.0)
    signal = max(votes, key=lambda name: votes[name])
    return signal, votes[signal] / total


def _approach(reports: list[ResearchReport]) -> Approach | None:
    """What the technical findings favour: trend-following in a trend, breakouts in high
    volatility, mean reversion in a range."""
    by = {f.indicator: f for r in reports for f in r.findings}
    if "trend" in by:
        quality = by["trend"].interpretation.split()[0]
        if (by.get("hv_20") and (by["hv_20"].value or 0) >= 35) and quality != "strong":
            return "breakout"
        return _APPROACH_OF_TREND.get(quality, "mean_reversion")  # type: ignore[return-value]
    return None


def _synthesize(domain: Domain, t: Transcript) -> FactSheet:
    """Weighted vote of the observed findings; modeled findings (derived, e.g. from a
    modeled option chain) are shown but decide nothing, so a domain seen only through
    models is ``unknown``."""
    reports = [ResearchReport.model_validate(r) for r in t.task_as(SynthesizerTask).reports]
    observed = [r for r in reports if r.data_quality == "observed"]
    signal, agreement = _weighted_signal([f for r in observed for f in r.findings])
    coverage = len(observed) / len(reports) if reports else 0.0

    def said(r: ResearchReport, text: str) -> str:
        return f"{r.agent}: {text}" + (" (modeled)" if r.data_quality == "modeled" else "")

    supporting = [
        said(r, f.interpretation) for r in observed for f in r.findings if f.signal == signal
    ]
    conflicting = [
        said(r, f.interpretation)
        for r in observed
        for f in r.findings
        if f.signal not in (signal, "neutral")
    ]
    seen = [r for r in reports if r.findings]
    return FactSheet(
        domain=domain,
        key_insights=[said(r, r.findings[0].interpretation) for r in seen][:5],
        supporting_evidence=supporting,
        conflicting_evidence=conflicting,
        confidence=round(agreement * coverage, 2),
        signal=signal,
        recommended_approach=_approach(reports) if domain == "technical" else None,
        risks=[f"{r.agent}: no observed data" for r in reports if r.data_quality != "observed"],
        opportunities=supporting[:2],
        missing=at_most(list(dict.fromkeys(line for r in reports for line in r.missing))),
    )


def synthesizer(domain: Domain) -> AgentSpec[ToolDeps, FactSheet]:
    """The synthesizer of one domain's five reports: one factory for the three."""
    name = f"{domain}_synthesizer"
    return AgentSpec(
        agent=Agent(
            name=name,
            max_tokens=1000,
            instructions=load_prompt(_PKG, "synthesizer_system").substitute(domain=domain),
            output_type=FactSheet,
        ),
        policy=RulesPolicy(plan=[], decide=partial(_synthesize, domain), name=name),
        turns={"quick": 1, "standard": 2, "deep": 3},
    )


# -- the research leader ---------------------------------------------------------------

_ALL: tuple[Approach, ...] = ("trend", "momentum", "mean_reversion", "breakout")


def _brief(t: Transcript) -> ResearchBrief:
    task = t.task_as(LeaderTask)
    sheets = [FactSheet.model_validate(s) for s in task.sheets]
    feedback = task.feedback or {}
    technical = next((s for s in sheets if s.domain == "technical"), None)
    first = technical.recommended_approach if technical else None
    ranked = [a for a in ((first,) if first else ()) + _ALL if a is not None]
    tried = set(feedback.get("approaches_tried") or [])
    fresh = [a for a in ranked if a not in tried] + [a for a in ranked if a in tried]
    # Past runs' lessons: approaches that met the goal before come first.
    proven = [
        lesson["approach"]
        for lesson in sorted(feedback.get("lessons") or [], key=lambda x: -x.get("score", 0))
        if lesson.get("decision") == "SUCCESS" and lesson.get("approach") in _ALL
    ]
    approaches = list(dict.fromkeys(proven + fresh))
    known = [s for s in sheets if s.signal != "unknown"]
    confidence = round(sum(s.confidence for s in known) / len(sheets), 2) if sheets else 0.0
    quality = "high" if len(known) == 3 else "medium" if len(known) == 2 else "low"
    gaps = at_most(
        [
            f"{s.domain}: no data ({'; '.join(s.missing[:1])})"
            for s in sheets
            if s.signal == "unknown"
        ]
    )
    views = ", ".join(f"{s.domain} {s.signal}" for s in sheets)
    retry = f" Re-research after {feedback['reason']}." if feedback.get("reason") else ""
    return ResearchBrief(
        summary=f"{task.symbol}: {views}. Most promising: {approaches[0]}.{retry}",
        approaches=approaches,
        confidence=confidence,
        research_quality=quality,
        gaps=gaps,
    )


LEADER: AgentSpec[ToolDeps, ResearchBrief] = AgentSpec(
    agent=Agent(
        name="research_leader",
        max_tokens=800,
        instructions=load_prompt(_PKG, "leader_system").template,
        output_type=ResearchBrief,
    ),
    policy=RulesPolicy(plan=[], decide=_brief, name="research_leader"),
    tier="deep",
    turns={"quick": 1, "standard": 2, "deep": 3},
)


def research_agents() -> tuple[list[AgentSpec[ToolDeps, Any]], dict[str, AgentSpec[ToolDeps, Any]]]:
    """The 15 subagents and the three synthesizers by domain."""
    return [research_subagent(row) for row in SUBAGENTS], {d: synthesizer(d) for d in DOMAINS}

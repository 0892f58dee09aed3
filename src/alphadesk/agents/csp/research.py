"""The Research Analyst: news, earnings, short interest and other red flags."""

from __future__ import annotations

from datetime import date
from typing import Any

from alphadesk.agent import Agent
from alphadesk.agents.csp.deps import CspDeps
from alphadesk.agents.csp.models import ResearchAnalysis, Risk
from alphadesk.agents.csp.tasks import ResearchTask
from alphadesk.agents.csp.validators import research_respects_earnings
from alphadesk.agents.spec import AgentSpec, load_prompt
from alphadesk.llm.rules import PlannedCall, RulesPolicy, Transcript
from alphadesk.tools.research import RESEARCH_TOOLS

__all__ = ["RESEARCH", "research_policy"]


def _gather(t: Transcript) -> list[PlannedCall]:
    symbol = t.task_as(ResearchTask).symbol
    return [
        (name, {"symbol": symbol})
        for name in (
            "get_news",
            "get_earnings_dates",
            "get_short_interest",
            "get_analyst_ratings",
            "get_sec_filings",
        )
    ]


def _news_risk(news: dict[str, Any]) -> tuple[Risk, str]:
    if not news.get("available"):
        return "moderate", "no news source as of the analysis date (risk unknown, not low)"
    negative, count = news.get("negative_headlines", 0), news.get("count", 0)
    if not count:
        days = news.get("days", "the")
        return "moderate", (
            f"no headline in the {days} days before the analysis date (risk unknown, not low)"
        )
    tone = news.get("sentiment")
    if tone == "negative" and negative >= 3:
        return "high", f"news tone negative ({negative} of {count} headlines)"
    if tone in ("negative", "mixed"):
        return "moderate", f"news tone {tone} ({negative} of {count} headlines negative)"
    return "low", f"news tone {tone} over {count} headlines"


def _earnings_risk(earnings: dict[str, Any], horizon: int, today: date) -> tuple[Risk, str]:
    days = earnings.get("days_until_next")
    if days is None and earnings.get("next_estimated_date"):
        estimate = date.fromisoformat(earnings["next_estimated_date"])
        days = (estimate - today).days
        basis = earnings.get("next_estimate_basis") or "estimate"
        if days <= horizon:
            return "high", (
                f"earnings expected about {estimate}, {days} days out, inside the {horizon}-day "
                f"option life (no date announced; {basis})"
            )
        if days <= horizon + 14:
            return "moderate", (
                f"earnings expected about {estimate}, {days} days out, just after expiry "
                f"(no date announced; {basis})"
            )
        return "low", (
            f"next earnings expected about {estimate}, {days} days out, after expiry "
            f"(no date announced; {basis})"
        )
    if days is None:
        return "moderate", "no earnings date known as of the analysis date (risk unknown)"
    if days <= horizon:
        return "high", f"earnings in {days} days, inside the {horizon}-day option life"
    if days <= horizon + 14:
        return "moderate", f"earnings in {days} days, just after the option expires"
    return "low", f"next earnings in {days} days, after expiration"


def _short_risk(short: dict[str, Any]) -> tuple[Risk, str]:
    level = short.get("level")
    if not short.get("available") or level is None:
        return "moderate", "short interest unavailable (risk unknown)"
    return level, f"short interest {short.get('short_pct_of_float')}% of float ({level})"


def _decide(t: Transcript) -> ResearchAnalysis:
    task = t.task_as(ResearchTask)
    horizon = task.horizon_days
    earnings = t.facts("get_earnings_dates")
    news_risk, news_note = _news_risk(t.facts("get_news"))
    earnings_risk, earnings_note = _earnings_risk(earnings, horizon, task.as_of.date())
    short_risk, short_note = _short_risk(t.facts("get_short_interest"))
    reject = news_risk == "high" and earnings_risk == "high"
    return ResearchAnalysis(
        recommendation="reject" if reject else "pass",
        news_risk=news_risk,
        earnings_risk=earnings_risk,
        short_interest_risk=short_risk,
        next_earnings=earnings.get("next_date"),
        research_notes="; ".join([news_note, earnings_note, short_note])
        + (". Rejected: negative news with earnings inside the window." if reject else "."),
    )


research_policy = RulesPolicy(plan=[_gather], decide=_decide, name="research")

RESEARCH: AgentSpec[CspDeps, ResearchAnalysis] = AgentSpec(
    agent=Agent(
        name="research",
        max_tokens=700,
        instructions=load_prompt("alphadesk.agents.csp", "research_system").template,
        output_type=ResearchAnalysis,
        toolset=RESEARCH_TOOLS,
        output_validators=(research_respects_earnings,),
    ),
    policy=research_policy,
    turns={"quick": 2, "standard": 4, "deep": 8},
)

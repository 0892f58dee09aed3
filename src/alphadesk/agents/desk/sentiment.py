"""The sentiment analyst: the crowd's mood, market fear, short positioning and ratings."""

from __future__ import annotations

from typing import Any, Literal

from alphadesk.agent import Agent, Toolset
from alphadesk.agents.desk.deps import DeskDeps
from alphadesk.agents.desk.figures import sentiment_figures
from alphadesk.agents.desk.models import SentimentReport
from alphadesk.agents.desk.scoring import Tally, collect_missing, signal_of
from alphadesk.agents.desk.tasks import SentimentTask
from alphadesk.agents.desk.validators import sentiment_matches_data
from alphadesk.agents.spec import AgentSpec, load_prompt
from alphadesk.llm.rules import PlannedCall, RulesPolicy, Transcript
from alphadesk.tools.market import get_market_data
from alphadesk.tools.research import get_analyst_ratings, get_short_interest
from alphadesk.tools.social import get_social_sentiment

__all__ = ["SENTIMENT", "sentiment_policy"]

Fear = Literal["calm", "normal", "elevated", "extreme"]
# VIX bands (points): below 15 calm, 20 normal, 30 elevated, above extreme.
_FEAR_BANDS: tuple[tuple[float, Fear, float], ...] = (
    (15.0, "calm", 0.15),
    (20.0, "normal", 0.0),
    (30.0, "elevated", -0.15),
    (float("inf"), "extreme", -0.3),
)
_VIX_JUMP = 2.0  # points in a day


def _gather(t: Transcript) -> list[PlannedCall]:
    symbol = t.task_as(SentimentTask).symbol
    return [
        ("get_social_sentiment", {"symbol": symbol}),
        ("get_market_data", {}),
        ("get_short_interest", {"symbol": symbol}),
        ("get_analyst_ratings", {"symbol": symbol}),
    ]


def _fear(level: float) -> tuple[Fear, float]:
    return next((name, weight) for top, name, weight in _FEAR_BANDS if level < top)


def _weigh(tally: Tally) -> Fear | None:
    figures, fear = tally.figures, None
    for name in ("vix", "sp500_realized_vol_20d"):
        if name in figures:
            fear, weight = _fear(figures[name])
            tally.add(name, weight, f"market fear {fear}")
            break
    change = figures.get("vix_volatility_change")
    if change is not None and abs(change) >= _VIX_JUMP:
        tally.add(
            "vix_volatility_change",
            -0.1 if change > 0 else 0.05,
            f"VIX {'jumped' if change > 0 else 'eased'} {change:+g} points",
        )
    short = figures.get("short_pct_of_float")
    if short is not None:
        tally.add("short_pct_of_float", -0.15 if short >= 15 else 0.0, f"{short:g}% of float short")
    net = figures.get("net_upgrades")
    if net is not None:
        tally.add("net_upgrades", max(-0.2, min(0.2, 0.07 * net)), f"net upgrades {net:+g}")
    return fear


def _decide(t: Transcript) -> SentimentReport:
    results: dict[str, Any] = {
        name: t.facts(name)
        for name in ("get_market_data", "get_short_interest", "get_analyst_ratings")
    }
    social = t.facts("get_social_sentiment")
    tally = Tally(sentiment_figures(*results.values()))
    fear = _weigh(tally)
    score = tally.score
    points = [e.reading for e in tally.evidence]
    summary = ("; ".join(points) + ".") if points else "No sentiment data at the analysis date."
    if not social.get("available"):
        summary += " The crowd's mood on social media is unknown (no social data)."
    return SentimentReport(
        signal=signal_of(score),
        score=score,
        confidence=round(min(1.0, 0.2 + abs(score)), 2) if tally.figures else 0.0,
        figures=tally.figures,
        evidence=tally.evidence,
        summary=summary,
        missing=collect_missing(social, *results.values()),
        social_available=bool(social.get("available")),
        market_fear=fear,
    )


sentiment_policy = RulesPolicy(plan=[_gather], decide=_decide, name="sentiment")

SENTIMENT: AgentSpec[DeskDeps, SentimentReport] = AgentSpec(
    agent=Agent(
        name="sentiment",
        max_tokens=1200,
        instructions=load_prompt("alphadesk.agents.desk", "sentiment_system").template,
        output_type=SentimentReport,
        toolset=Toolset.of(
            "desk_sentiment",
            [get_social_sentiment, get_market_data, get_short_interest, get_analyst_ratings],
        ),
        output_validators=(sentiment_matches_data,),
    ),
    policy=sentiment_policy,
    turns={"quick": 2, "standard": 4, "deep": 8},
)

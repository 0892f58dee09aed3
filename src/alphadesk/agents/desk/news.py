"""The news analyst: recent headlines scored with the Loughran-McDonald lexicon."""

from __future__ import annotations

from datetime import UTC, datetime

from alphadesk.agent import Agent, Toolset
from alphadesk.agents.desk.deps import DeskDeps
from alphadesk.agents.desk.figures import news_figures
from alphadesk.agents.desk.models import NewsReport
from alphadesk.agents.desk.scoring import Tally, collect_missing, signal_of
from alphadesk.agents.desk.tasks import NewsTask
from alphadesk.agents.desk.validators import news_matches_headlines
from alphadesk.agents.spec import AgentSpec, load_prompt
from alphadesk.llm.rules import PlannedCall, RulesPolicy, Transcript
from alphadesk.tools.research import get_earnings_dates, get_news, get_sec_filings

__all__ = ["NEWS", "news_policy"]

_DAYS = 14
_FULL_WEIGHT_HEADLINES = 5  # fewer headlines say less
_HEADLINES = 3


def _gather(t: Transcript) -> list[PlannedCall]:
    return [("get_news", {"symbol": t.task_as(NewsTask).symbol, "days": _DAYS})]


def _decide(t: Transcript) -> NewsReport:
    news = t.facts("get_news")
    if not news.get("available"):
        return NewsReport(
            signal="neutral",
            score=0.0,
            confidence=0.0,
            summary="No news source at the analysis date: the news cannot be judged.",
            missing=collect_missing(news),
            news_available=False,
            days=_DAYS,
        )
    count = news.get("count", 0)
    if not count:
        return NewsReport(
            signal="neutral",
            score=0.0,
            confidence=0.0,
            summary=f"No headline in the {_DAYS} days before the analysis date: the news "
            "tone is unknown (not calm).",
            missing=collect_missing(news),
            news_available=True,
            days=_DAYS,
        )
    tally = Tally(news_figures(news))
    weight = min(1.0, count / _FULL_WEIGHT_HEADLINES)
    tone = news.get("sentiment") or "neutral"
    tally.add(
        "sentiment_score",
        0.8 * weight * (news.get("sentiment_score") or 0.0),
        f"headline tone {tone}",
    )
    tally.add("negative_headlines", 0.0, f"{news.get('negative_headlines', 0)} negative headlines")
    tally.add("positive_headlines", 0.0, f"{news.get('positive_headlines', 0)} positive headlines")
    rows = news.get("headlines") or []
    telling = [h for h in rows if h["tone"] != "neutral"][:_HEADLINES] or rows[:_HEADLINES]
    score = tally.score
    return NewsReport(
        signal=signal_of(score),
        score=score,
        confidence=round(min(1.0, 0.2 + 0.5 * weight + abs(score)), 2) if count else 0.1,
        figures=tally.figures,
        evidence=tally.evidence,
        summary=f"{count} articles in {_DAYS} days, tone {tone} "
        f"(score {news.get('sentiment_score', 0):+.2f}). "
        + "; ".join(_quoted(h) for h in telling)
        + ".",
        missing=collect_missing(news),
        news_available=True,
        days=_DAYS,
        headlines=[h["title"] for h in telling],
    )


def _quoted(headline: dict[str, object]) -> str:
    """A headline with its publication time (UTC), publisher and tone, as scored."""
    published = datetime.fromisoformat(str(headline["published_at"]).replace("Z", "+00:00"))
    when = published.astimezone(UTC).strftime("%Y-%m-%d %H:%M")
    publisher = f"{headline['publisher']}, " if headline.get("publisher") else ""
    return f"{when} UTC \u201c{headline['title']}\u201d ({publisher}{headline['tone']})"


news_policy = RulesPolicy(plan=[_gather], decide=_decide, name="news")

NEWS: AgentSpec[DeskDeps, NewsReport] = AgentSpec(
    agent=Agent(
        name="news",
        max_tokens=1200,
        instructions=load_prompt("alphadesk.agents.desk", "news_system").template,
        output_type=NewsReport,
        toolset=Toolset.of("desk_news", [get_news, get_earnings_dates, get_sec_filings]),
        output_validators=(news_matches_headlines,),
    ),
    policy=news_policy,
    turns={"quick": 2, "standard": 4, "deep": 8},
)

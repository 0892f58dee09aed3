"""Output validators that tie every desk agent's words to the facts.

Analysts: each named figure is recomputed with the analyst's own tools at the run's
instant; data a tool lacked must be stated missing, never filled in. Later stages: each
cited fact must be on the fact sheet with its value, and every price level a trader or
judge names must lie in the range the stock traded. A violation raises ModelRetry saying
what the facts are; it never passes silently.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import timedelta
from typing import TypeVar

from alphadesk.agent import ModelRetry, RunContext
from alphadesk.agents.desk.deps import DeskDeps
from alphadesk.agents.desk.facts import citation_problems, matches
from alphadesk.agents.desk.figures import (
    fundamentals_figures,
    market_figures,
    news_figures,
    sentiment_figures,
)
from alphadesk.agents.desk.models import (
    AnalystReport,
    DebateTurn,
    FundamentalsReport,
    InvestmentPlan,
    MarketReport,
    NewsReport,
    Position,
    RiskView,
    SentimentReport,
)
from alphadesk.tools.chart.signals import get_technical_indicators
from alphadesk.tools.market import get_fundamentals, get_market_data
from alphadesk.tools.research import get_analyst_ratings, get_news, get_short_interest
from alphadesk.tools.social import get_social_sentiment

__all__ = [
    "cites_the_facts",
    "fundamentals_match_filings",
    "market_matches_data",
    "news_matches_headlines",
    "position_lies_in_range",
    "sentiment_matches_data",
]

ReportT = TypeVar("ReportT", bound=AnalystReport)
CitingT = TypeVar("CitingT", DebateTurn, InvestmentPlan, RiskView)

# A level may come from the two years the chart tools read, and sit a little beyond them
# (a target just past a high); an entry is near the last close.
_LOOKBACK = timedelta(days=2 * 366)
_BEYOND_RANGE = 0.10
_ENTRY_DISTANCE = 0.10
_PRICE_TOLERANCE = 0.01


def _figure_problems(out: AnalystReport, reference: Mapping[str, float]) -> list[str]:
    problems = []
    for name, value in out.figures.items():
        if name not in reference:
            known = ", ".join(sorted(reference)) or "none"
            problems.append(f"figure {name!r} is not in the tools' output (they give: {known})")
        elif not matches(value, reference[name]):
            problems.append(f"{name} is {reference[name]:g}, not {value:g}")
    for item in out.evidence:
        if item.fact not in out.figures:
            problems.append(f"evidence cites {item.fact!r}, which is not in your figures")
        elif not matches(item.value, out.figures[item.fact]):
            problems.append(
                f"evidence gives {item.fact} as {item.value:g}, figures say "
                f"{out.figures[item.fact]:g}"
            )
    return problems


def _absent_problems(out: AnalystReport, what: str, reason: list[str]) -> list[str]:
    """A report on data the tools did not have: nothing claimed, the gap stated."""
    problems = []
    if out.signal != "neutral" or out.confidence != 0:
        problems.append(f"there is no {what} data, so the signal is neutral with confidence 0")
    if not out.missing:
        problems.append(f"state in `missing` that {what} data was missing: {'; '.join(reason)}")
    return problems


def _checked(out: ReportT, problems: list[str], what: str) -> ReportT:
    if problems:
        raise ModelRetry(f"The {what} report contradicts its tools: " + "; ".join(problems))
    return out


async def market_matches_data(ctx: RunContext[DeskDeps], out: MarketReport) -> MarketReport:
    """Figures are the indicators at as_of, the price is the last close, the trend is the
    tool's, and levels lie in the traded range on the right side of the price."""
    indicators = await get_technical_indicators.function(ctx, ctx.deps.symbol)
    reference = market_figures(indicators.model_dump(mode="json"))
    problems = _figure_problems(out, reference)
    last = indicators.current_price
    if abs(out.current_price - last) > _PRICE_TOLERANCE * last:
        problems.append(f"current_price {out.current_price} is not the last close {last}")
    trend = indicators.trend
    if trend is not None and (trend.direction, trend.quality) != (
        out.trend_direction,
        out.trend_quality,
    ):
        problems.append(
            f"the trend is {trend.quality} {trend.direction}, not "
            f"{out.trend_quality} {out.trend_direction}"
        )
    low, high, _ = await _traded_range(ctx)
    for name, levels, below in (
        ("support", out.support_levels, True),
        ("resistance", out.resistance_levels, False),
    ):
        for level in levels:
            if not low <= level <= high:
                problems.append(
                    f"{name} {level} lies outside the traded range {low:.2f}-{high:.2f}"
                )
            elif (level >= last) if below else (level <= last):
                side = "below" if below else "above"
                problems.append(f"{name} {level} is not {side} the current price {last}")
    return _checked(out, problems, "market")


async def news_matches_headlines(ctx: RunContext[DeskDeps], out: NewsReport) -> NewsReport:
    """Counts and tone are get_news's over the report's window; no news means none claimed."""
    news = await get_news.function(ctx, ctx.deps.symbol, days=out.days)
    if not news.available:
        problems = _absent_problems(out, "news", news.missing)
        if out.news_available or out.figures or out.headlines:
            problems.append("news_available is false and no figures or headlines are given")
        return _checked(out, problems, "news")
    problems = _figure_problems(out, news_figures(news.model_dump(mode="json")))
    if not out.news_available:
        problems.append(f"{news.count} articles were found: news_available is true")
    titles = {h.title for h in news.headlines}
    problems += [
        f"headline {t!r} is not among the articles" for t in out.headlines if t not in titles
    ]
    return _checked(out, problems, "news")


async def fundamentals_match_filings(
    ctx: RunContext[DeskDeps], out: FundamentalsReport
) -> FundamentalsReport:
    """Figures are get_fundamentals's as filed by as_of; none are invented when it has none."""
    report = await get_fundamentals.function(ctx, ctx.deps.symbol)
    if not report.available:
        problems = _absent_problems(out, "fundamentals", report.missing)
        if out.fundamentals_available or out.figures:
            problems.append("fundamentals_available is false and no figures are given")
        return _checked(out, problems, "fundamentals")
    problems = _figure_problems(out, fundamentals_figures(report.model_dump(mode="json")))
    if not out.fundamentals_available:
        problems.append("statements were found: fundamentals_available is true")
    return _checked(out, problems, "fundamentals")


async def sentiment_matches_data(
    ctx: RunContext[DeskDeps], out: SentimentReport
) -> SentimentReport:
    """Figures are the market snapshot's, short interest's and ratings'; no social claim
    without social data."""
    symbol = ctx.deps.symbol
    market, short, ratings, social = await asyncio.gather(
        get_market_data.function(ctx),
        get_short_interest.function(ctx, symbol),
        get_analyst_ratings.function(ctx, symbol),
        get_social_sentiment.function(ctx, symbol),
    )
    reference = sentiment_figures(*(r.model_dump(mode="json") for r in (market, short, ratings)))
    problems = _figure_problems(out, reference)
    if out.social_available and not social.available:
        problems.append("no social-media data was found: social_available is false")
    if not reference and (out.signal != "neutral" or out.confidence != 0):
        problems.append("no sentiment data was found: the signal is neutral with confidence 0")
    return _checked(out, problems, "sentiment")


async def cites_the_facts(ctx: RunContext[DeskDeps], out: CitingT) -> CitingT:
    """Every cited fact is on the fact sheet with its value."""
    problems = citation_problems(out.evidence, ctx.deps.facts)
    if problems:
        raise ModelRetry("Cite only the fact sheet, with its values: " + "; ".join(problems))
    return out


PositionT = TypeVar("PositionT", bound=Position)


async def position_lies_in_range(ctx: RunContext[DeskDeps], out: PositionT) -> PositionT:
    """Cited facts are right, the entry is near the last close, and every level lies in
    the range the stock traded over two years (or a little beyond it)."""
    problems = citation_problems(out.evidence, ctx.deps.facts)
    if out.levels:
        low, high, last = await _traded_range(ctx)
        floor, ceiling = low * (1 - _BEYOND_RANGE), high * (1 + _BEYOND_RANGE)
        for name, level in out.levels.items():
            if not floor <= level <= ceiling:
                problems.append(
                    f"{name} {level:g} lies outside the traded range {low:.2f}-{high:.2f} "
                    f"(at most {_BEYOND_RANGE:.0%} beyond it)"
                )
        entry = out.levels.get("entry")
        if entry is not None and abs(entry - last) > _ENTRY_DISTANCE * last:
            problems.append(
                f"entry {entry:g} is more than {_ENTRY_DISTANCE:.0%} from the last close {last:.2f}"
            )
    if problems:
        raise ModelRetry("The position contradicts the data: " + "; ".join(problems))
    return out


async def _traded_range(ctx: RunContext[DeskDeps]) -> tuple[float, float, float]:
    """The low and high traded over the look-back (widened by a quote's rounding), and
    the last close."""
    deps = ctx.deps
    start = (ctx.as_of - _LOOKBACK).date()
    bars = await asyncio.to_thread(deps.market.daily_bars, deps.symbol, ctx.as_of, start=start)
    closes = bars.prices()
    low = bars.frame["low"].min() if "low" in bars.fields else closes.min()
    high = bars.frame["high"].max() if "high" in bars.fields else closes.max()
    return float(low) * 0.999, float(high) * 1.001, float(closes.iloc[-1])

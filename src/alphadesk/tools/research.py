"""Research tools: news with Loughran–McDonald sentiment, earnings dates, short interest,
analyst rating changes and SEC filings, all as known at the run's instant.

Absent data is an answer, not an error: when no provider has news (or earnings, ...) for a
symbol at ``as_of``, the output says ``available: false`` and names what was missing and
why, so a model or a rules policy can weigh the gap instead of assuming "no news".
Percentages are percent (5.0 = 5 %); dates are the New York calendar date.
"""

from __future__ import annotations

import logging
import statistics
from collections import Counter
from datetime import date, datetime, timedelta
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, Field

from alphadesk.agent import RunContext, Toolset, tool
from alphadesk.analytics.sentiment import lm_sentiment
from alphadesk.data.calendar import local_date
from alphadesk.data.models import AnalystRating, EarningsEvent, NewsItem
from alphadesk.tools.common import ToolOutput, absent, round_pct, source_of, try_market
from alphadesk.tools.deps import ToolDeps
from alphadesk.tools.once import once_per_step

__all__ = [
    "RESEARCH_TOOLS",
    "AnalystRatingsReport",
    "EarningsReport",
    "EarningsRow",
    "FilingRow",
    "FilingsReport",
    "Headline",
    "NewsReport",
    "RatingAction",
    "ShortInterestReport",
    "get_analyst_ratings",
    "get_earnings_dates",
    "get_news",
    "get_sec_filings",
    "get_short_interest",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")
Tone = Literal["positive", "negative", "neutral"]
_TONE_THRESHOLD = 0.2  # net polarity beyond which the overall tone is not neutral
_QUARTER_DAYS = 91  # cadence used only for the labelled estimate of the next release
_YEAR_DAYS = 364  # the same weekday a year on: companies keep their quarterly slots
_MAX_TITLE = 200


# -- get_news ------------------------------------------------------------------------------


class Headline(BaseModel):
    """One article and the tone of its headline."""

    published_at: datetime
    title: str
    publisher: str | None = None
    url: str | None = None
    polarity: float = Field(description="(positive - negative) / (positive + negative) words.")
    tone: Tone
    positive_words: int
    negative_words: int


class NewsReport(ToolOutput):
    """Recent news and its Loughran–McDonald tone."""

    available: bool
    days: int = Field(description="Look-back window in days before as_of.")
    count: int = Field(0, description="Articles in the window.")
    sentiment_score: float | None = Field(
        None, description="Net polarity of all headlines' words together, -1 to 1."
    )
    sentiment: Literal["positive", "negative", "neutral", "mixed"] | None = Field(
        None,
        description="positive/negative beyond +-0.2; mixed when both kinds of "
        "headline are present in between; else neutral.",
    )
    mean_polarity: float | None = None
    positive_headlines: int = 0
    negative_headlines: int = 0
    neutral_headlines: int = 0
    headlines: list[Headline] = Field(default_factory=list, description="Newest first.")


def _headline(item: NewsItem) -> Headline:
    score = lm_sentiment(item.title)
    tone: Tone = (
        "positive" if score.polarity > 0 else "negative" if score.polarity < 0 else "neutral"
    )
    return Headline(
        published_at=item.known_at,
        title=item.title[:_MAX_TITLE],
        publisher=item.publisher,
        url=item.url,
        polarity=round(score.polarity, 3),
        tone=tone,
        positive_words=score.positive,
        negative_words=score.negative,
    )


def _overall(rows: list[Headline]) -> dict[str, Any]:
    pos = sum(h.positive_words for h in rows)
    neg = sum(h.negative_words for h in rows)
    tones = Counter(h.tone for h in rows)
    score = (pos - neg) / (pos + neg) if pos + neg else 0.0
    if score >= _TONE_THRESHOLD:
        label = "positive"
    elif score <= -_TONE_THRESHOLD:
        label = "negative"
    else:
        label = "mixed" if tones["positive"] and tones["negative"] else "neutral"
    return {
        "sentiment_score": round(score, 3),
        "sentiment": label,
        "mean_polarity": round(statistics.fmean(h.polarity for h in rows), 3),
        "positive_headlines": tones["positive"],
        "negative_headlines": tones["negative"],
        "neutral_headlines": tones["neutral"],
    }


@tool
@once_per_step
async def get_news(
    ctx: RunContext[ToolDeps],
    symbol: str,
    days: Annotated[int, Field(ge=1, le=90)] = 7,
    limit: Annotated[int, Field(ge=1, le=30)] = 15,
) -> NewsReport:
    """Recent news about a company with the sentiment of each headline and overall.

    Articles published before the run's instant, newest first, each headline scored with
    the Loughran-McDonald financial sentiment dictionary, and the overall tone
    (sentiment_score from -1 to 1; positive, negative, neutral or mixed). available is
    false, with the reason in missing, when no provider has news.

    Args:
        symbol: Ticker, e.g. "MSFT".
        days: How many days back to look.
        limit: Most headlines to return (the tone covers all of them).
    """
    market = ctx.deps.market
    news, reason = await try_market(
        ctx, symbol, "news", market.news, symbol, ctx.as_of, days=days, limit=200
    )
    if news is None:
        return absent(NewsReport, ctx, symbol, reason, days=days)
    # Guard the point-in-time rule here too: a provider bug must not leak the future.
    items = [n for n in news.items if n.known_at <= ctx.as_of]
    rows = [_headline(n) for n in sorted(items, key=lambda n: n.known_at, reverse=True)]
    base = {
        "symbol": news.symbol,
        "as_of": ctx.as_of,
        "source": source_of(news.provenance),
        "missing": list(news.provenance.missing),
        "days": days,
        "count": len(rows),
    }
    if not rows:
        return NewsReport(**base, available=True, sentiment="neutral", sentiment_score=0.0)
    return NewsReport(**base, available=True, **_overall(rows), headlines=rows[:limit])


# -- get_earnings_dates --------------------------------------------------------------------


class EarningsRow(BaseModel):
    """A past earnings release."""

    date: date
    eps_estimate: float | None = None
    eps_actual: float | None = None
    surprise_pct: float | None = Field(None, description="Percent.")


class EarningsReport(ToolOutput):
    """The next and last earnings releases relative to the run's instant."""

    available: bool
    next_date: date | None = Field(None, description="Next announced release, if any.")
    next_time: datetime | None = None
    days_until_next: int | None = Field(None, description="Calendar days from as_of.")
    next_eps_estimate: float | None = None
    next_estimated_date: date | None = Field(
        None,
        description="Only when no date is announced: an estimate, not a fact (see "
        "next_estimate_basis).",
    )
    next_estimate_basis: str | None = Field(
        None,
        max_length=200,
        description="How next_estimated_date was estimated: the release a year before "
        "the next one + 364 days, else the last release + 91 days.",
    )
    last_date: date | None = None
    days_since_last: int | None = None
    last_eps_actual: float | None = None
    last_eps_estimate: float | None = None
    last_surprise_pct: float | None = None
    recent: list[EarningsRow] = Field(default_factory=list, description="Up to 4, newest first.")


def _past_row(event: EarningsEvent) -> EarningsRow:
    return EarningsRow(
        date=local_date(event.time),
        eps_estimate=event.eps_estimate,
        eps_actual=event.eps_actual,
        surprise_pct=round_pct(event.surprise_pct),
    )


def _earnings_fields(events: list[EarningsEvent], as_of: datetime) -> dict[str, Any]:
    today = local_date(as_of)
    upcoming = sorted((e for e in events if e.time > as_of), key=lambda e: e.time)
    past = sorted((e for e in events if e.time <= as_of), key=lambda e: e.time, reverse=True)
    fields: dict[str, Any] = {"recent": [_past_row(e) for e in past[:4]]}
    if upcoming:
        nxt = upcoming[0]  # only the estimate: an actual is not known before the release
        fields |= {
            "next_date": local_date(nxt.time),
            "next_time": nxt.time,
            "days_until_next": (local_date(nxt.time) - today).days,
            "next_eps_estimate": nxt.eps_estimate,
        }
    if past:
        last = past[0]
        fields |= {
            "last_date": local_date(last.time),
            "days_since_last": (today - local_date(last.time)).days,
            "last_eps_actual": last.eps_actual,
            "last_eps_estimate": last.eps_estimate,
            "last_surprise_pct": round_pct(last.surprise_pct),
        }
        if not upcoming:
            fields |= _estimate(past, today)
    return fields


def _estimate(past: list[EarningsEvent], today: date) -> dict[str, Any]:
    """The next release estimated from past ones (newest first): a year after the
    release of the same quarter, when that one is known, else a quarter after the last."""
    year_ago = [
        local_date(e.time) + timedelta(_YEAR_DAYS)
        for e in past
        if local_date(e.time) + timedelta(_YEAR_DAYS) >= today
    ]
    if year_ago and (year_ago[-1] - today).days <= _QUARTER_DAYS + 14:
        when = year_ago[-1]
        basis = f"estimate: the release of {when - timedelta(_YEAR_DAYS)} + {_YEAR_DAYS} days"
    else:
        when = local_date(past[0].time) + timedelta(_QUARTER_DAYS)
        basis = f"estimate: the last release ({local_date(past[0].time)}) + {_QUARTER_DAYS} days"
    return {"next_estimated_date": when, "next_estimate_basis": basis}


@tool
async def get_earnings_dates(ctx: RunContext[ToolDeps], symbol: str) -> EarningsReport:
    """Next and last earnings dates of a company, and days until the next one.

    The next release announced by the run's instant (date, days until it, EPS estimate)
    and the last one (EPS and surprise), plus up to four recent releases. When no date has
    been announced, next_date is empty (unknown) and next_estimated_date gives an estimate
    from past releases, with next_estimate_basis saying how it was made. available is
    false when no provider has an earnings calendar.

    Args:
        symbol: Ticker, e.g. "MSFT".
    """
    market = ctx.deps.market
    earnings, reason = await try_market(ctx, symbol, "earnings", market.earnings, symbol, ctx.as_of)
    if earnings is None:
        return absent(EarningsReport, ctx, symbol, reason)
    events = [e for e in earnings.items if e.known_at <= ctx.as_of]
    fields = _earnings_fields(events, ctx.as_of)
    missing = list(earnings.provenance.missing)
    if not events:
        missing.append(
            f"earnings: {earnings.provenance.provider} knows no release of "
            f"{earnings.symbol} as of {local_date(ctx.as_of)}"
        )
    elif fields.get("next_date") is None:
        missing.append(
            f"next earnings: no date announced as of {local_date(ctx.as_of)} (unknown; "
            "next_estimated_date is an estimate from past releases, not a known date)"
        )
    return EarningsReport(
        symbol=earnings.symbol,
        as_of=ctx.as_of,
        available=bool(events),
        source=source_of(earnings.provenance),
        missing=missing,
        **fields,
    )


# -- get_short_interest --------------------------------------------------------------------


class ShortInterestReport(ToolOutput):
    """Short interest as last reported before the run's instant."""

    available: bool
    short_pct_of_float: float | None = Field(None, description="Percent of the float.")
    days_to_cover: float | None = Field(None, description="Shares short / average volume.")
    shares_short: float | None = None
    shares_short_prior_month: float | None = None
    change_pct: float | None = Field(None, description="Shares short vs a month before, %.")
    settlement_date: date | None = Field(None, description="The date the figure refers to.")
    age_days: int | None = Field(None, description="Days from settlement_date to as_of.")
    level: Literal["low", "moderate", "high"] | None = Field(
        None,
        description="By % of float: < 5 low, < 15 moderate, else high; by days to "
        "cover (< 3, < 7) when the float share is unknown.",
    )


def _short_level(pct: float | None, dtc: float | None) -> Literal["low", "moderate", "high"] | None:
    if pct is not None:
        return "low" if pct < 5 else "moderate" if pct < 15 else "high"
    if dtc is not None:
        return "low" if dtc < 3 else "moderate" if dtc < 7 else "high"
    return None


@tool
@once_per_step
async def get_short_interest(ctx: RunContext[ToolDeps], symbol: str) -> ShortInterestReport:
    """Short interest of a stock: percent of float, days to cover and the trend.

    The figure known at the run's instant: percent of float, days to cover, shares short
    and their change over a month, the settlement date and its age, and a level (low,
    moderate, high). available is false when no provider has the figure.

    Args:
        symbol: Ticker, e.g. "MSFT".
    """
    market = ctx.deps.market
    si, reason = await try_market(
        ctx, symbol, "short interest", market.short_interest, symbol, ctx.as_of
    )
    if si is None:
        return absent(ShortInterestReport, ctx, symbol, reason)
    pct = si.short_percent_of_float * 100.0 if si.short_percent_of_float is not None else None
    prior = si.shares_short_prior_month
    change = (si.shares_short / prior - 1.0) * 100.0 if si.shares_short and prior else None
    as_of_day = local_date(ctx.as_of)
    missing = list(si.provenance.missing) + [
        name
        for name, value in (("short_pct_of_float", pct), ("days_to_cover", si.days_to_cover))
        if value is None
    ]
    return ShortInterestReport(
        symbol=si.symbol,
        as_of=ctx.as_of,
        source=source_of(si.provenance),
        missing=missing,
        available=True,
        short_pct_of_float=round_pct(pct),
        days_to_cover=round_pct(si.days_to_cover),
        shares_short=si.shares_short,
        shares_short_prior_month=prior,
        change_pct=round_pct(change),
        settlement_date=si.settlement_date,
        age_days=(as_of_day - si.settlement_date).days if si.settlement_date else None,
        level=_short_level(pct, si.days_to_cover),
    )


# -- get_analyst_ratings -------------------------------------------------------------------


class RatingAction(BaseModel):
    """One firm's rating action."""

    date: date
    firm: str
    action: Literal["upgrade", "downgrade", "initiation", "reiteration", "other"]
    from_grade: str | None = None
    to_grade: str | None = None
    price_target: float | None = None


class AnalystRatingsReport(ToolOutput):
    """Rating actions over a window and their balance."""

    available: bool
    days: int
    count: int = 0
    upgrades: int = 0
    downgrades: int = 0
    initiations: int = 0
    reiterations: int = 0
    net_upgrades: int = Field(0, description="upgrades - downgrades.")
    price_target_mean: float | None = Field(None, description="Latest target of each firm.")
    price_target_low: float | None = None
    price_target_high: float | None = None
    recent: list[RatingAction] = Field(default_factory=list, description="Newest first.")


_ACTIONS = (
    ("up", "upgrade"),
    ("down", "downgrade"),
    ("init", "initiation"),
    ("main", "reiteration"),
    ("reit", "reiteration"),
)


def _action(raw: str | None) -> Any:
    text = (raw or "").strip().lower()
    return next((name for prefix, name in _ACTIONS if text.startswith(prefix)), "other")


def _rating_row(item: AnalystRating) -> RatingAction:
    return RatingAction(
        date=local_date(item.known_at),
        firm=item.firm,
        action=_action(item.action),
        from_grade=item.from_grade,
        to_grade=item.to_grade,
        price_target=item.price_target,
    )


def _targets(items: list[AnalystRating]) -> dict[str, float | None]:
    latest: dict[str, float] = {}
    for item in sorted(items, key=lambda r: r.known_at):
        if item.price_target is not None:
            latest[item.firm] = item.price_target
    if not latest:
        return {}
    values = list(latest.values())
    return {
        "price_target_mean": round(statistics.fmean(values), 2),
        "price_target_low": min(values),
        "price_target_high": max(values),
    }


@tool
@once_per_step
async def get_analyst_ratings(
    ctx: RunContext[ToolDeps],
    symbol: str,
    days: Annotated[int, Field(ge=7, le=730)] = 90,
    limit: Annotated[int, Field(ge=1, le=20)] = 10,
) -> AnalystRatingsReport:
    """Analyst rating changes of a stock: upgrades, downgrades and price targets.

    Actions published in the window before the run's instant: counts of upgrades,
    downgrades, initiations and reiterations, net upgrades, the range of the firms' latest
    price targets, and the most recent actions. available is false when no provider has
    ratings.

    Args:
        symbol: Ticker, e.g. "MSFT".
        days: How many days back to look.
        limit: Most recent actions to list.
    """
    market = ctx.deps.market
    ratings, reason = await try_market(
        ctx, symbol, "analyst ratings", market.analyst_ratings, symbol, ctx.as_of, days=days
    )
    if ratings is None:
        return absent(AnalystRatingsReport, ctx, symbol, reason, days=days)
    items = [r for r in ratings.items if r.known_at <= ctx.as_of]
    rows = [_rating_row(r) for r in sorted(items, key=lambda r: r.known_at, reverse=True)]
    kinds = Counter(r.action for r in rows)
    return AnalystRatingsReport(
        symbol=ratings.symbol,
        as_of=ctx.as_of,
        source=source_of(ratings.provenance),
        missing=list(ratings.provenance.missing),
        available=True,
        days=days,
        count=len(rows),
        upgrades=kinds["upgrade"],
        downgrades=kinds["downgrade"],
        initiations=kinds["initiation"],
        reiterations=kinds["reiteration"],
        net_upgrades=kinds["upgrade"] - kinds["downgrade"],
        **_targets(items),
        recent=rows[:limit],
    )


# -- get_sec_filings -----------------------------------------------------------------------


class FilingRow(BaseModel):
    """One filing on EDGAR."""

    form: str
    filed_at: datetime = Field(description="Acceptance time on EDGAR.")
    report_date: date | None = None
    description: str | None = None
    url: str | None = None


class FilingsReport(ToolOutput):
    """Recent SEC filings."""

    available: bool
    days: int
    count: int = Field(0, description="Filings in the window.")
    count_8k: int = Field(0, description="8-K current reports in the window.")
    forms: dict[str, int] = Field(default_factory=dict, description="Count per form.")
    last_10k: date | None = None
    last_10q: date | None = None
    filings: list[FilingRow] = Field(default_factory=list, description="Newest first.")


@tool
async def get_sec_filings(
    ctx: RunContext[ToolDeps],
    symbol: str,
    days: Annotated[int, Field(ge=7, le=730)] = 90,
    forms: list[str] | None = None,
    limit: Annotated[int, Field(ge=1, le=20)] = 10,
) -> FilingsReport:
    """Recent SEC filings of a company, with the count of 8-K material-event reports.

    Filings accepted on EDGAR in the window before the run's instant: how many, how many
    8-K current reports, counts per form, the dates of the last 10-K and 10-Q, and the
    most recent filings. available is false when no provider has filings.

    Args:
        symbol: Ticker, e.g. "MSFT".
        days: How many days back to count.
        forms: Only these forms, e.g. ["8-K", "10-Q"]; all forms when omitted.
        limit: Most filings to list.
    """
    market = ctx.deps.market
    filings, reason = await try_market(
        ctx, symbol, "filings", market.filings, symbol, ctx.as_of, forms=forms, limit=500
    )
    if filings is None:
        return absent(FilingsReport, ctx, symbol, reason, days=days)
    known = [f for f in filings.items if f.known_at <= ctx.as_of]
    since = ctx.as_of - timedelta(days=days)
    window = sorted(
        (f for f in known if f.known_at >= since), key=lambda f: f.known_at, reverse=True
    )
    per_form = Counter(f.form.upper() for f in window)

    def last(form: str) -> date | None:
        dates = [f.filing_date for f in known if f.form.upper() == form]
        return max(dates) if dates else None

    return FilingsReport(
        symbol=filings.symbol,
        as_of=ctx.as_of,
        source=source_of(filings.provenance),
        missing=list(filings.provenance.missing),
        available=True,
        days=days,
        count=len(window),
        count_8k=per_form["8-K"] + per_form["8-K/A"],
        forms=dict(per_form),
        last_10k=last("10-K"),
        last_10q=last("10-Q"),
        filings=[
            FilingRow(
                form=f.form,
                filed_at=f.known_at,
                report_date=f.report_date,
                description=f.description,
                url=f.url,
            )
            for f in window[:limit]
        ],
    )


RESEARCH_TOOLS = Toolset.of(
    "research",
    [get_news, get_earnings_dates, get_short_interest, get_analyst_ratings, get_sec_filings],
)

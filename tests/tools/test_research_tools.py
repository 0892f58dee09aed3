"""The research tools through the engine: missing data said plainly on the bundled data,
and correct sentiment, dates and summaries from an in-test provider of fixed records.

The fake serves records published both before and after the run's instant; nothing from
after it may reach a tool's output.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from alphadesk.agent import Agent, RunScope
from alphadesk.config import DataSettings, Settings
from alphadesk.data import build_provider
from alphadesk.data.base import DataKind, Provider
from alphadesk.data.models import (
    AnalystRating,
    AnalystRatings,
    Earnings,
    EarningsEvent,
    Filing,
    Filings,
    News,
    NewsItem,
    Provenance,
    ShortInterest,
)
from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.llm.messages import text_of
from alphadesk.llm.testing import ScriptedModel, tool_calls
from alphadesk.tools.deps import ToolDeps
from alphadesk.tools.fundamentals import FUNDAMENTALS_TOOLS
from alphadesk.tools.research import RESEARCH_TOOLS

AS_OF = datetime(2021, 6, 30, 20, tzinfo=UTC)
AFTER = AS_OF + timedelta(hours=1)
PROV = Provenance(provider="fake", origin="observed", retrieved_at=AS_OF, source="test records")


def at(days_before: float) -> datetime:
    return AS_OF - timedelta(days=days_before)


# Headlines whose Loughran-McDonald words were counted by hand from the dictionary:
# (title, positive words, negative words).
HEADLINES = [
    ("Microsoft posts strong gains and achieves record improvement", 4, 0),  # strong gains
    # achieves improvement
    ("Regulators open fraud investigation; shares decline on lawsuit", 0, 3),  # fraud
    # investigation decline
    ("Microsoft to hold annual shareholder meeting", 0, 0),
    ("Analysts see strong quarter but warn of loss in gaming unit", 1, 2),  # strong | warn loss
    ("Cloud growth is not strong enough, says analyst", 0, 1),  # negated "strong"
]


class FakeResearch(Provider):
    """Fixed news, earnings, short interest, ratings and filings for MSFT."""

    name = "fake"
    kinds = frozenset(
        {
            DataKind.NEWS,
            DataKind.EARNINGS,
            DataKind.SHORT_INTEREST,
            DataKind.ANALYST_RATINGS,
            DataKind.FILINGS,
        }
    )

    def _news(self, symbol: str, as_of: datetime) -> News:
        items = [
            NewsItem(known_at=at(5 - i), title=t, publisher="Wire", url=f"https://x/{i}")
            for i, (t, _, _) in enumerate(HEADLINES)
        ]
        items += [
            NewsItem(known_at=at(10), title="Old news: strong gains"),  # outside 7 days
            NewsItem(known_at=AFTER, title="FUTURE: Microsoft shares soar on record profit"),
        ]
        return News(symbol=symbol, items=items, provenance=PROV)

    def _earnings(self, symbol: str, as_of: datetime) -> Earnings:
        return Earnings(
            symbol=symbol,
            provenance=PROV,
            items=[
                EarningsEvent(
                    known_at=datetime(2021, 1, 26, 21, tzinfo=UTC),
                    time=datetime(2021, 1, 26, 21, tzinfo=UTC),
                    eps_estimate=1.64,
                    eps_actual=2.03,
                    surprise_pct=23.78,
                ),
                EarningsEvent(
                    known_at=datetime(2021, 4, 27, 20, 5, tzinfo=UTC),
                    time=datetime(2021, 4, 27, 20, 5, tzinfo=UTC),
                    eps_estimate=1.78,
                    eps_actual=1.95,
                    surprise_pct=9.55,
                ),
                # Announced before as_of; the actual is filled in by a provider later and must
                # not leak into a run on 2021-06-30.
                EarningsEvent(
                    known_at=datetime(2021, 6, 1, 12, tzinfo=UTC),
                    time=datetime(2021, 7, 27, 20, 5, tzinfo=UTC),
                    eps_estimate=1.92,
                    eps_actual=2.17,
                    surprise_pct=13.0,
                ),
                # Announced after as_of: unknown to the run.
                EarningsEvent(
                    known_at=datetime(2021, 7, 10, 12, tzinfo=UTC),
                    time=datetime(2021, 10, 26, 20, 5, tzinfo=UTC),
                    eps_estimate=2.07,
                ),
            ],
        )

    def _short_interest(self, symbol: str, as_of: datetime) -> ShortInterest:
        return ShortInterest(
            symbol=symbol,
            observed_at=at(5),
            provenance=PROV,
            shares_short=40_000_000,
            short_percent_of_float=0.0053,
            days_to_cover=1.3,
            shares_short_prior_month=45_000_000,
            settlement_date=date(2021, 6, 15),
        )

    def _analyst_ratings(self, symbol: str, as_of: datetime) -> AnalystRatings:
        def rating(days: float, firm: str, action: str, target: float | None) -> AnalystRating:
            return AnalystRating(
                known_at=at(days),
                firm=firm,
                action=action,
                from_grade="Hold",
                to_grade="Buy",
                price_target=target,
            )

        return AnalystRatings(
            symbol=symbol,
            provenance=PROV,
            items=[
                rating(200, "Old Firm", "down", 200.0),  # outside a 90-day window
                rating(60, "Alpha", "up", 280.0),
                rating(40, "Beta", "down", 250.0),
                rating(30, "Gamma", "main", 300.0),
                rating(20, "Alpha", "reit", 290.0),  # Alpha's latest target replaces 280
                rating(10, "Delta", "init", None),
                rating(2, "Epsilon", "up", 310.0),
                AnalystRating(known_at=AFTER, firm="Future", action="up", price_target=999.0),
            ],
        )

    def _filings(self, symbol: str, as_of: datetime) -> Filings:
        def filing(days: float, form: str, n: int) -> Filing:
            when = at(days) if days >= 0 else AFTER
            return Filing(
                known_at=when,
                form=form,
                filing_date=when.date(),
                accession_number=f"0001-21-{n:06d}",
                description=f"{form} #{n}",
            )

        return Filings(
            symbol=symbol,
            provenance=PROV,
            items=[
                filing(330, "10-K", 1),
                filing(64, "10-Q", 2),
                filing(45, "8-K", 3),
                filing(12, "8-K", 4),
                filing(3, "4", 5),
                filing(-1, "8-K", 6),
            ],
        )


async def call(market: Any, name: str, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    agent = Agent(
        name="tester",
        instructions="Research.",
        output_type=str,
        toolset=RESEARCH_TOOLS,
        max_turns=2,
    )
    model = ScriptedModel([tool_calls((name, args)), "done"])
    result = await agent.run(
        model, "Research MSFT", deps=ToolDeps(market=market), scope=RunScope(as_of=AS_OF)
    )
    assert result.ok, result.outcome
    text = text_of(model.requests[1].messages[-1].content)
    return json.loads(text), text


@pytest.fixture
def fake() -> FakeResearch:
    return FakeResearch(clock=lambda: AS_OF)


def test_schemas_the_model_sees() -> None:
    assert RESEARCH_TOOLS.names == [
        "get_news",
        "get_earnings_dates",
        "get_short_interest",
        "get_analyst_ratings",
        "get_sec_filings",
    ]
    for item in RESEARCH_TOOLS:
        assert item.spec.parameters["required"] == ["symbol"]
        assert "available is false" in " ".join(item.spec.description.split())


async def test_invalid_window_is_a_retry(fake: FakeResearch) -> None:
    agent = Agent(
        name="tester",
        instructions="Research.",
        output_type=str,
        toolset=RESEARCH_TOOLS,
        max_turns=3,
    )
    model = ScriptedModel(
        [
            tool_calls(("get_news", {"symbol": "MSFT", "days": 0})),
            tool_calls(("get_news", {"symbol": "MSFT"})),
            "done",
        ]
    )
    result = await agent.run(model, "go", deps=ToolDeps(market=fake), scope=RunScope(as_of=AS_OF))
    assert result.ok
    assert "Invalid arguments for get_news" in text_of(model.requests[1].messages[-1].content)


@pytest.mark.parametrize("name", RESEARCH_TOOLS.names)
async def test_bundled_data_reports_each_absence_clearly(name: str) -> None:
    out, text = await call(BundledProvider(), name, {"symbol": "KO"})  # no SEC data bundled
    assert out["available"] is False
    assert out["symbol"] == "KO" and out["as_of"] == "2021-06-30T20:00:00Z"
    kind = {
        "get_news": "news",
        "get_earnings_dates": "earnings",
        "get_short_interest": "short interest",
        "get_analyst_ratings": "analyst ratings",
        "get_sec_filings": "filings",
    }[name]
    assert out["missing"] and out["missing"][0].startswith(f"{kind}:")
    assert "bundled" in out["missing"][0]
    assert len(text) < 1_000


async def test_news_sentiment_per_headline_and_overall(fake: FakeResearch) -> None:
    out, text = await call(fake, "get_news", {"symbol": "MSFT"})
    assert "FUTURE" not in text and "Old news" not in text
    assert out["available"] is True and out["count"] == 5
    heads = out["headlines"]
    assert [h["title"] for h in heads] == [t for t, _, _ in reversed(HEADLINES)]  # newest first
    for h in heads:
        _, pos, neg = next(x for x in HEADLINES if x[0] == h["title"])
        assert (h["positive_words"], h["negative_words"]) == (pos, neg)
        expected = (pos - neg) / (pos + neg) if pos + neg else 0.0
        assert h["polarity"] == pytest.approx(expected, abs=1e-3)
        assert h["tone"] == (
            "positive" if expected > 0 else "negative" if expected < 0 else "neutral"
        )
    # Overall: 5 positive and 6 negative words -> -1/11, both tones present -> mixed.
    assert out["sentiment_score"] == pytest.approx(-1 / 11, abs=1e-3)
    assert out["sentiment"] == "mixed"
    assert (out["positive_headlines"], out["negative_headlines"], out["neutral_headlines"]) == (
        1,
        3,
        1,
    )
    assert out["mean_polarity"] == pytest.approx((1 - 1 + 0 - 1 / 3 - 1) / 5, abs=1e-3)


async def test_news_limit_caps_the_list_not_the_tone(fake: FakeResearch) -> None:
    out, _ = await call(fake, "get_news", {"symbol": "MSFT", "days": 30, "limit": 2})
    assert out["count"] == 6 and len(out["headlines"]) == 2
    assert out["positive_headlines"] == 2  # the old "strong gains" headline is counted


async def test_news_guard_holds_even_if_a_source_leaks_the_future(fake: FakeResearch) -> None:
    class Leaky:
        """Not a Provider: returns everything it has, whatever the as_of."""

        name = "leaky"

        def news(self, symbol: str, as_of: datetime, *, days: int = 7, limit: int = 50) -> News:
            return fake._news(symbol, as_of)

    out, text = await call(Leaky(), "get_news", {"symbol": "MSFT", "days": 30})
    assert "FUTURE" not in text and out["count"] == 6


async def test_earnings_next_and_last_relative_to_as_of(fake: FakeResearch) -> None:
    out, text = await call(fake, "get_earnings_dates", {"symbol": "MSFT"})
    assert out["available"] is True
    assert out["next_date"] == "2021-07-27" and out["days_until_next"] == 27
    assert out["next_eps_estimate"] == 1.92
    assert "2.17" not in text and "13.0" not in text  # the future actual never appears
    assert "2021-10-26" not in text  # announced after as_of
    assert out["last_date"] == "2021-04-27" and out["days_since_last"] == 64
    assert (out["last_eps_actual"], out["last_surprise_pct"]) == (1.95, 9.55)
    assert [r["date"] for r in out["recent"]] == ["2021-04-27", "2021-01-26"]
    assert "next_estimated_date" not in out


async def test_earnings_without_an_announced_date_is_estimated_and_labelled() -> None:
    class NoUpcoming(FakeResearch):
        def _earnings(self, symbol: str, as_of: datetime) -> Earnings:
            past = super()._earnings(symbol, as_of).items[:2]
            return Earnings(symbol=symbol, items=past, provenance=PROV)

    out, _ = await call(NoUpcoming(clock=lambda: AS_OF), "get_earnings_dates", {"symbol": "MSFT"})
    assert "next_date" not in out and "days_until_next" not in out
    assert out["next_estimated_date"] == str(date(2021, 4, 27) + timedelta(days=91))
    assert any("no date announced" in m for m in out["missing"])


async def test_short_interest_summary(fake: FakeResearch) -> None:
    out, _ = await call(fake, "get_short_interest", {"symbol": "MSFT"})
    assert out["available"] is True
    assert out["short_pct_of_float"] == pytest.approx(0.53)
    assert out["days_to_cover"] == 1.3
    assert out["change_pct"] == pytest.approx((40 / 45 - 1) * 100, abs=0.01)
    assert out["settlement_date"] == "2021-06-15" and out["age_days"] == 15
    assert out["level"] == "low"


async def test_analyst_ratings_summary(fake: FakeResearch) -> None:
    out, text = await call(fake, "get_analyst_ratings", {"symbol": "MSFT", "days": 90})
    assert "Future" not in text and "999" not in text and "Old Firm" not in text
    assert out["count"] == 6
    assert (out["upgrades"], out["downgrades"], out["initiations"], out["reiterations"]) == (
        2,
        1,
        1,
        2,
    )
    assert out["net_upgrades"] == 1
    # Latest target per firm: Alpha 290, Beta 250, Gamma 300, Epsilon 310.
    assert out["price_target_mean"] == pytest.approx((290 + 250 + 300 + 310) / 4)
    assert (out["price_target_low"], out["price_target_high"]) == (250, 310)
    assert [r["firm"] for r in out["recent"]][:2] == ["Epsilon", "Delta"]


async def test_sec_filings_summary(fake: FakeResearch) -> None:
    out, text = await call(fake, "get_sec_filings", {"symbol": "MSFT", "days": 90})
    assert "#6" not in text  # accepted after as_of
    assert out["count"] == 4 and out["count_8k"] == 2
    assert out["forms"] == {"10-Q": 1, "8-K": 2, "4": 1}
    assert out["last_10k"] == str(at(330).date()) and out["last_10q"] == str(at(64).date())
    assert [f["form"] for f in out["filings"]] == ["4", "8-K", "8-K", "10-Q"]
    only, _ = await call(fake, "get_sec_filings", {"symbol": "MSFT", "forms": ["8-K"]})
    assert only["count"] == 2 and set(only["forms"]) == {"8-K"}


async def test_a_folder_of_bars_only_says_what_is_missing_and_where_to_get_it(
    tmp_path: Path,
) -> None:
    # The user's own folder holds SYN's daily bars and nothing else: SYN is no typo, its
    # news and fundamentals are missing, and each answer names the file or provider to add.
    folder = tmp_path / "market" / "bars" / "1d"
    folder.mkdir(parents=True)
    (folder / "SYN.csv").write_text("date,close\n2021-06-28,10\n2021-06-29,10.5\n")
    settings = Settings(
        data_dir=tmp_path / "home",
        data=DataSettings(providers=["local"], local_dir=tmp_path / "market"),
    )
    market = build_provider(settings)
    news, _ = await call(market, "get_news", {"symbol": "SYN"})
    facts = await call_fundamentals(market, "SYN")
    filings, _ = await call(market, "get_sec_filings", {"symbol": "SYN"})
    for out in (news, facts, filings):
        assert out["available"] is False and "did you mean" not in out["missing"][0]
    assert "daily bars of SYN but no news: add news/SYN.jsonl" in news["missing"][0]
    wanted = "no fundamentals: add fundamentals/SYN.csv or fundamentals/SYN.json"
    assert wanted in facts["missing"][0]
    assert "sec" in facts["missing"][0] and "bundled" in facts["missing"][0]
    assert "no configured provider serves filings; add sec" in filings["missing"][0]


async def call_fundamentals(market: Any, symbol: str) -> dict[str, Any]:
    agent = Agent(
        name="tester",
        instructions="Research.",
        output_type=str,
        toolset=FUNDAMENTALS_TOOLS,
        max_turns=2,
    )
    model = ScriptedModel([tool_calls(("get_fundamentals", {"symbol": symbol})), "done"])
    result = await agent.run(
        model, "Research", deps=ToolDeps(market=market), scope=RunScope(as_of=AS_OF)
    )
    assert result.ok, result.outcome
    out: dict[str, Any] = json.loads(text_of(model.requests[1].messages[-1].content))
    return out

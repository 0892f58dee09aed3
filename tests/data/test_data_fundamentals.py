"""SEC fundamentals and earnings releases, offline and point in time.

Expected numbers are literal values read by hand from EDGAR's company-facts JSON (the
fixtures of finpanel 0.1.0a2 and edgar-ratios 2.0.0), each with its accession number.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alphadesk.agent import RunScope
from alphadesk.agents.csp.deps import CspDeps
from alphadesk.agents.csp.research import RESEARCH
from alphadesk.agents.csp.tasks import ResearchTask
from alphadesk.agents.desk import DeskDeps, default_agents
from alphadesk.agents.desk.tasks import FundamentalsTask
from alphadesk.config import DataSettings, Settings
from alphadesk.data import build_provider
from alphadesk.data.base import DataKind, Provider
from alphadesk.data.calendar import close_on_or_before
from alphadesk.data.fundamentals import statements
from alphadesk.data.models import Fundamentals, Provenance, Quote
from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.llm.rules import RulesModel
from alphadesk.tools.deps import ToolDeps
from alphadesk.tools.fundamentals import get_fundamentals
from alphadesk.tools.research import get_earnings_dates

NY = ZoneInfo("America/New_York")
BUNDLED = BundledProvider()

# symbol, as_of (a close after the 10-K, before the next 10-Q), accession, fiscal year end,
# revenue, net income, diluted EPS: as in the 10-K's XBRL facts.
TEN_KS = [
    ("AAPL", "2019-11-15", "0000320193-19-000119", "2019-09-28", 260_174e6, 55_256e6, 11.89),
    ("MSFT", "2020-09-15", "0001564590-20-034944", "2020-06-30", 143_015e6, 44_281e6, 5.76),
    ("NVDA", "2021-03-31", "0001045810-21-000010", "2021-01-31", 16_675e6, 4_332e6, 6.90),
    ("AMZN", "2018-03-15", "0001018724-18-000005", "2017-12-31", 177_866e6, 3_033e6, 6.15),
]


class _Ctx:
    """The slice of a run context a tool function reads."""

    def __init__(self, market: object, as_of: datetime) -> None:
        self.deps = ToolDeps(market=market)  # type: ignore[arg-type]
        self.as_of = as_of
        self.retry = 0
        self.max_retries = 1


@pytest.mark.parametrize(("symbol", "day", "accession", "end", "revenue", "income", "eps"), TEN_KS)
async def test_the_desk_fundamentals_analyst_reads_the_10k(
    symbol: str, day: str, accession: str, end: str, revenue: float, income: float, eps: float
) -> None:
    as_of = close_on_or_before(date.fromisoformat(day))
    spec = default_agents().analysts["fundamentals"]
    result = await spec.agent.run(
        RulesModel(spec.policy),
        FundamentalsTask(symbol=symbol, as_of=as_of).message(),
        deps=DeskDeps(market=build_provider(Settings()), symbol=symbol),
        scope=RunScope(as_of=as_of),
    )
    assert result.outcome.kind == "completed", result.outcome.reason
    report = result.output
    assert report.fundamentals_available
    assert report.figures["revenue_annual"] == revenue
    assert report.figures["net_income_annual"] == income
    assert report.figures["eps_diluted_annual"] == pytest.approx(eps)
    found = statements(BUNDLED.fundamentals(symbol, as_of), as_of)
    annual = found.figure("revenue", "annual")
    assert annual is not None and annual.accession_number == accession
    assert str(annual.period_end) == end and annual.form == "10-K"


async def test_the_tool_gives_ratios_and_valuation_with_its_basis() -> None:
    as_of = close_on_or_before(date(2012, 12, 14))
    out = await get_fundamentals.function(_Ctx(BUNDLED, as_of), "AAPL")  # type: ignore[arg-type]
    assert out.available and out.last_accession == "0001193125-12-444068"  # FY2012 10-K
    # The 10-K: operating cash flow 50,856M, diluted EPS 44.15, equity 118,210M; its cover:
    # 940,692,000 shares outstanding on 2012-10-19. Capex = 50,856M - FCF.
    assert out.operating_cash_flow == 50_856e6 and out.free_cash_flow == 42_561e6
    price = BUNDLED.quote("AAPL", as_of)
    assert out.price == price.price and out.price_date == date(2012, 12, 14)
    assert out.pe_ratio == pytest.approx(price.price / 44.15, abs=1e-3)
    assert out.market_cap == pytest.approx(price.price * 940_692_000)
    assert out.pb_ratio == pytest.approx(price.price * 940_692_000 / 118_210e6, abs=1e-3)
    assert out.price_basis and "not adjusted for later splits" in out.price_basis
    assert out.ps_ratio is not None and out.ev_to_ebitda is not None


class _BackAdjusted(Provider):
    """The bundled statements, and a close adjusted for splits made later."""

    name = "adjusted"
    kinds = frozenset({DataKind.FUNDAMENTALS, DataKind.QUOTE})

    def _fundamentals(self, symbol: str, as_of: datetime) -> Fundamentals:
        return BUNDLED.fundamentals(symbol, as_of)

    def _quote(self, symbol: str, as_of: datetime) -> Quote:
        provenance = Provenance(provider=self.name, origin="observed", retrieved_at=as_of)
        return Quote(symbol=symbol, observed_at=as_of, provenance=provenance, price=20.0,
                     basis="adj_close")  # fmt: skip


async def test_valuation_is_withheld_against_a_price_adjusted_for_later_splits() -> None:
    as_of = close_on_or_before(date(2021, 6, 30))  # NVDA traded near $800, $20 back-adjusted
    out = await get_fundamentals.function(_Ctx(_BackAdjusted(), as_of), "NVDA")  # type: ignore[arg-type]
    assert out.available and out.revenue_growth_pct is not None
    assert out.pe_ratio is None and out.market_cap is None and out.price is None
    assert any(m.startswith("valuation: withheld") for m in out.missing)


async def test_valuation_uses_the_price_as_traded_before_a_later_split() -> None:
    # NVDA split 4:1 on 2021-07-20: the bundled close of 2021-06-30 is the one of that day,
    # on the same basis as the EPS filed then, so the valuation is given.
    as_of = close_on_or_before(date(2021, 6, 30))
    out = await get_fundamentals.function(_Ctx(BUNDLED, as_of), "NVDA")  # type: ignore[arg-type]
    quote = BUNDLED.quote("NVDA", as_of)
    assert quote.as_traded and quote.price > 700
    eps = next(f.value for f in out.figures if f.name == "eps_diluted" and f.period == "ttm")
    assert out.price == quote.price
    assert out.pe_ratio == pytest.approx(quote.price / eps, abs=1e-3)
    assert not any(m.startswith("valuation:") for m in out.missing)


def test_a_fact_counts_from_its_filings_acceptance() -> None:
    # Apple's FY2019 10-K was accepted 2019-10-30 at 18:12:36 (EDGAR: 22:12:36Z), read
    # no earlier than 22:12:36 New York time; filed 2019-10-31.
    before = datetime(2019, 10, 30, 22, 12, 35, tzinfo=NY)
    after = datetime(2019, 10, 30, 22, 12, 36, tzinfo=NY)
    old = statements(BUNDLED.fundamentals("AAPL", before), before).figure("revenue", "annual")
    new = statements(BUNDLED.fundamentals("AAPL", after), after).figure("revenue", "annual")
    assert old is not None and old.period_end == date(2018, 9, 29)
    assert new is not None and new.value == 260_174e6


@settings(max_examples=25, deadline=None)
@given(
    symbol=st.sampled_from(["AAPL", "MSFT", "NVDA", "AMZN"]),
    day=st.dates(min_value=date(2010, 6, 1), max_value=date(2024, 12, 31)),
    hour=st.integers(min_value=0, max_value=23),
)
def test_no_figure_was_filed_after_as_of(symbol: str, day: date, hour: int) -> None:
    as_of = datetime(day.year, day.month, day.day, hour, tzinfo=UTC)
    facts = BUNDLED.fundamentals(symbol, as_of)
    assert all(f.known_at <= as_of and f.filed <= day for f in facts.items)
    found = statements(facts, as_of)
    assert all(f.known_at <= as_of and f.filed <= day for f in found.figures)
    # The latest filing by as_of wins for every period (restatements included).
    for figure in found.figures:
        if figure.concept.startswith("derived") or figure.period == "ttm":
            continue
        same = [
            f
            for f in facts.items
            if f.concept == figure.concept
            and f.end == figure.period_end
            and f.start == figure.period_start
            and f.unit == figure.unit
        ]
        assert max(same, key=lambda f: f.known_at).value == figure.value


async def test_earnings_dates_come_from_8k_item_202_and_the_next_is_only_estimated() -> None:
    as_of = close_on_or_before(date(2019, 7, 25))
    out = await get_earnings_dates.function(_Ctx(BUNDLED, as_of), "AAPL")  # type: ignore[arg-type]
    assert out.available and out.last_date == date(2019, 4, 30)  # 8-K item 2.02
    # 2019-01-02: Apple's revenue-guidance letter, filed under item 2.02 too.
    assert [r.date for r in out.recent] == [
        date(2019, 4, 30),
        date(2019, 1, 29),
        date(2019, 1, 2),
        date(2018, 11, 1),
    ]
    assert out.next_date is None  # EDGAR never lists a release before it happens
    assert out.next_estimated_date == date(2018, 7, 31) + timedelta(days=364)
    assert out.next_estimate_basis and out.next_estimate_basis.startswith("estimate")
    assert any("no date announced" in m for m in out.missing)


async def test_a_csp_window_covering_a_release_rates_earnings_risk_from_its_date() -> None:
    as_of = close_on_or_before(date(2019, 7, 19))  # Apple reported 2019-07-30
    market = build_provider(Settings())
    result = await RESEARCH.agent.run(
        RulesModel(RESEARCH.policy),
        ResearchTask(symbol="AAPL", as_of=as_of, horizon_days=30).message(),
        deps=CspDeps(market=market, symbol="AAPL"),
        scope=RunScope(as_of=as_of),
    )
    assert result.outcome.kind == "completed", result.outcome.reason
    out = result.output
    assert out.earnings_risk == "high"
    assert "2019-07-30" in out.research_notes and "11 days" in out.research_notes
    assert "no date announced" in out.research_notes
    later = close_on_or_before(date(2019, 8, 5))  # after the release: next one ~Oct 30
    late = await RESEARCH.agent.run(
        RulesModel(RESEARCH.policy),
        ResearchTask(symbol="AAPL", as_of=later, horizon_days=30).message(),
        deps=CspDeps(market=market, symbol="AAPL"),
        scope=RunScope(as_of=later),
    )
    assert late.output.earnings_risk == "low"


def _local(tmp_path: Path, body: str) -> Settings:
    (tmp_path / "fundamentals").mkdir(exist_ok=True)
    (tmp_path / "fundamentals" / "AAPL.json").write_text(body)
    return Settings(
        data_dir=tmp_path, data=DataSettings(providers=["local", "bundled"], local_dir=tmp_path)
    )


@pytest.mark.parametrize("body", ["{not json", '{"cik": 320193, "facts": []}', "[]"])
async def test_a_malformed_company_facts_file_is_named_and_skipped(
    tmp_path: Path, body: str
) -> None:
    market = build_provider(_local(tmp_path, body))
    as_of = close_on_or_before(date(2019, 11, 15))
    out = await get_fundamentals.function(_Ctx(market, as_of), "AAPL")  # type: ignore[arg-type]
    assert out.available and out.source.provider == "bundled"  # the next provider answers
    path = str(tmp_path / "fundamentals" / "AAPL.json")
    assert any(m.startswith("skipped local:") and path in m for m in out.missing)


async def test_a_partial_company_facts_file_keeps_its_good_values(tmp_path: Path) -> None:
    good = {
        "start": "2018-09-30",
        "end": "2019-09-28",
        "val": 260174000000,
        "fy": 2019,
        "fp": "FY",
        "form": "10-K",
        "filed": "2019-10-31",
        "accn": "0000320193-19-000119",
    }
    raw = {
        "cik": 320193,
        "entityName": "Apple Inc.",
        "facts": {
            "us-gaap": {
                "Revenues": {"units": {"USD": [good, {"end": "2019-12-28", "val": 1}]}},
                "NetIncomeLoss": {"label": "no units"},
            }
        },
    }
    market = build_provider(_local(tmp_path, json.dumps(raw)))
    as_of = close_on_or_before(date(2019, 11, 15))
    out = await get_fundamentals.function(_Ctx(market, as_of), "AAPL")  # type: ignore[arg-type]
    assert out.available and out.source.provider == "local"
    revenue = next(f for f in out.figures if f.name == "revenue" and f.period == "annual")
    assert revenue.value == 260_174e6
    # No filing list in the folder: known from the next session's open after filing day.
    assert revenue.known_at == datetime(2019, 11, 1, 9, 30, tzinfo=NY)
    note = next(m for m in out.missing if m.startswith("note:"))
    assert str(tmp_path / "fundamentals" / "AAPL.json") in note and "2 broken" in note

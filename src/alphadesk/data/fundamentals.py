"""Statements and ratios from SEC company facts, as known at an instant.

:func:`statements` reads a :class:`~alphadesk.data.models.Fundamentals` timeline (from
the bundled EDGAR archive, a company-facts file in the ``local`` folder or the online
``sec`` provider) and returns the key figures a reader needs: the latest fiscal year, the
latest quarter and the trailing twelve months of each flow (revenue, earnings, cash
flow), the latest balance sheet, margins, growth over a year, debt, free cash flow, and
valuation against a price. Rules:

* only facts known at ``as_of`` count (each from its filing's acceptance time); for a
  period reported several times (restatements, amendments, comparatives in later
  filings) the latest filed by ``as_of`` wins;
* a figure the filings do not give stays absent and is named in ``missing``: nothing is
  estimated, except the values derived by stated arithmetic (gross profit = revenue -
  cost of revenue, free cash flow = operating cash flow - capital expenditure, trailing
  twelve months = last fiscal year + this year to date - last year to date).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .models import Fact, Fundamentals

__all__ = ["FLOWS", "STOCKS", "Figure", "Statements", "Valuation", "statements"]

Period = Literal["annual", "quarter", "ttm", "instant"]

# Each figure: its name, the us-gaap (or dei) concepts that report it in order of
# preference (companies switch concepts over the years), and the unit.
FLOWS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "revenue",
        (
            "RevenueFromContractWithCustomerExcludingAssessedTax",
            "Revenues",
            "SalesRevenueNet",
            "RevenueFromContractWithCustomerIncludingAssessedTax",
            "SalesRevenueGoodsNet",
        ),
        "USD",
    ),
    ("cost_of_revenue", ("CostOfRevenue", "CostOfGoodsAndServicesSold", "CostOfGoodsSold"), "USD"),
    ("gross_profit", ("GrossProfit",), "USD"),
    ("operating_income", ("OperatingIncomeLoss",), "USD"),
    ("net_income", ("NetIncomeLoss",), "USD"),
    ("eps_diluted", ("EarningsPerShareDiluted",), "USD/shares"),
    ("operating_cash_flow", ("NetCashProvidedByUsedInOperatingActivities",), "USD"),
    (
        "capex",
        ("PaymentsToAcquirePropertyPlantAndEquipment", "PaymentsToAcquireProductiveAssets"),
        "USD",
    ),
    (
        "depreciation_amortization",
        (
            "DepreciationDepletionAndAmortization",
            "DepreciationAndAmortization",
            "DepreciationAmortizationAndAccretionNet",
        ),
        "USD",
    ),
)
STOCKS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "cash",
        (
            "CashAndCashEquivalentsAtCarryingValue",
            "CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents",
        ),
        "USD",
    ),
    ("total_assets", ("Assets",), "USD"),
    ("current_assets", ("AssetsCurrent",), "USD"),
    ("total_liabilities", ("Liabilities",), "USD"),
    ("current_liabilities", ("LiabilitiesCurrent",), "USD"),
    ("long_term_debt", ("LongTermDebtNoncurrent", "LongTermDebt"), "USD"),
    ("current_debt", ("LongTermDebtCurrent", "DebtCurrent"), "USD"),
    ("commercial_paper", ("CommercialPaper", "ShortTermBorrowings"), "USD"),
    ("stockholders_equity", ("StockholdersEquity",), "USD"),
    (
        "shares_outstanding",
        ("EntityCommonStockSharesOutstanding", "CommonStockSharesOutstanding"),
        "shares",
    ),
)
_YEAR = timedelta(days=365)
_MATCH_DAYS = 20  # a period "a year earlier" ends within this many days of end - 365


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Figure(_Frozen):
    """One statement figure as filed, with the filing it comes from."""

    name: str
    period: Period
    value: float
    unit: str
    concept: str = Field(description="The XBRL concept, or 'derived: ...' for arithmetic.")
    period_start: date | None = None
    period_end: date
    fiscal_year: int | None = None
    fiscal_period: str | None = Field(None, description="FY, Q1, Q2, Q3 as the filing says.")
    form: str | None = None
    accession_number: str | None = None
    filed: date
    known_at: datetime = Field(description="When the figure became public.")
    year_ago: float | None = Field(None, description="Same item, period ending a year earlier.")
    change_pct: float | None = Field(None, description="value vs year_ago, percent.")


class Valuation(_Frozen):
    """Ratios of the market value at a price to the statements known then."""

    price: float
    price_date: date
    price_basis: str = Field(description="What the price is and how per-share figures match.")
    market_cap: float | None = None
    enterprise_value: float | None = None
    pe_ratio: float | None = Field(None, description="price / trailing diluted EPS.")
    ps_ratio: float | None = Field(None, description="market cap / trailing revenue.")
    pb_ratio: float | None = Field(None, description="market cap / stockholders' equity.")
    ev_to_ebitda: float | None = Field(
        None, description="EV / trailing (operating income + depreciation and amortization)."
    )
    fcf_yield_pct: float | None = Field(None, description="trailing free cash flow / cap, %.")


class Statements(_Frozen):
    """Key figures and ratios as known at ``as_of``."""

    as_of: datetime
    figures: list[Figure]
    last_filed: date | None = None
    last_form: str | None = None
    last_accession: str | None = None
    gross_margin_pct: float | None = None
    operating_margin_pct: float | None = None
    net_margin_pct: float | None = None
    fcf_margin_pct: float | None = None
    revenue_growth_pct: float | None = Field(
        None, description="Trailing (or annual) vs a year ago."
    )
    eps_growth_pct: float | None = None
    current_ratio: float | None = None
    total_debt: float | None = Field(None, description="Long-term + current debt + paper.")
    net_debt: float | None = Field(None, description="total_debt - cash.")
    debt_to_equity: float | None = Field(None, description="total_debt / equity.")
    free_cash_flow: float | None = Field(None, description="Trailing (or annual) CFO - capex.")
    valuation: Valuation | None = None
    missing: list[str] = Field(default_factory=list)

    def figure(self, name: str, period: Period) -> Figure | None:
        """The figure ``name`` over ``period``, or None."""
        return next((f for f in self.figures if f.name == name and f.period == period), None)


# -- periods -------------------------------------------------------------------------------


def _days(fact: Fact) -> int | None:
    return None if fact.start is None else (fact.end - fact.start).days


def _is_annual(fact: Fact) -> bool:
    days = _days(fact)
    return days is not None and 350 <= days <= 380


def _is_quarter(fact: Fact) -> bool:
    days = _days(fact)
    return days is not None and 80 <= days <= 100


def _near(a: date, b: date, days: int = _MATCH_DAYS) -> bool:
    return abs((a - b).days) <= days


def _history(by_concept: dict[str, list[Fact]], concepts: tuple[str, ...], unit: str) -> list[Fact]:
    """Every period of the item, the latest filed value of each (restatements win), from
    its preferred concept where several report it."""
    chosen: dict[tuple[date | None, date], Fact] = {}
    for concept in reversed(concepts):  # preferred concepts overwrite the others
        latest: dict[tuple[date | None, date], Fact] = {}
        for fact in by_concept.get(concept, ()):
            key = (fact.start, fact.end)
            if fact.unit == unit and (key not in latest or fact.known_at >= latest[key].known_at):
                latest[key] = fact
        chosen |= latest
    return sorted(chosen.values(), key=lambda f: (f.end, f.start or f.end))


def _year_ago(fact: Fact, history: Iterable[Fact]) -> Fact | None:
    span = _days(fact)
    for other in history:
        if other is fact or not _near(other.end, fact.end - _YEAR):
            continue
        if span is None or (_days(other) is not None and abs(_days(other) - span) <= 10):  # type: ignore[operator]
            return other
    return None


def _as_figure(name: str, period: Period, fact: Fact, prior: Fact | None) -> Figure:
    change = None
    if prior is not None and prior.value > 0:
        change = round((fact.value / prior.value - 1.0) * 100.0, 2)
    return Figure(
        name=name,
        period=period,
        value=fact.value,
        unit=fact.unit,
        concept=fact.concept,
        period_start=fact.start,
        period_end=fact.end,
        fiscal_year=fact.fiscal_year,
        fiscal_period=fact.fiscal_period,
        form=fact.form,
        accession_number=fact.accession_number,
        filed=fact.filed,
        known_at=fact.known_at,
        year_ago=prior.value if prior is not None else None,
        change_pct=change,
    )


def _to_date(history: list[Fact], annual: Fact, end: date) -> Fact | None:
    """The year-to-date value ending ``end`` of the fiscal year following ``annual``."""
    return next(
        (f for f in history if f.end == end and f.start and _near(f.start, annual.end, 7)), None
    )


def _trailing(history: list[Fact], annual: Fact, end: date) -> float | None:
    """The twelve months ending ``end``: fiscal year ``annual`` plus the year to date
    after it minus the same span a year earlier (``annual`` itself when end is its end)."""
    if end == annual.end:
        return annual.value
    current = _to_date(history, annual, end)
    prior = _year_ago(current, history) if current is not None else None
    if current is None or prior is None:
        return None
    return round(annual.value + current.value - prior.value, 6)


def _ttm_figure(name: str, history: list[Fact], annuals: list[Fact]) -> Figure | None:
    """The trailing twelve months ending at the latest period reported, against the
    trailing twelve months a year earlier."""
    annual = annuals[-1]
    latest = max(f.end for f in history if f.start is not None)
    value = _trailing(history, annual, latest)
    if value is None:
        return None
    source = annual if latest == annual.end else _to_date(history, annual, latest)
    assert source is not None  # _trailing found it
    year_before = _year_ago(annual, annuals)
    prior = _trailing(history, year_before, latest - _YEAR) if year_before else None
    if prior is None and year_before is not None:  # a year-ago end off by a few days
        ends = [f.end for f in history if _near(f.end, latest - _YEAR)]
        prior = _trailing(history, year_before, ends[0]) if ends else None
    fact = source.model_copy(update={"value": value, "start": latest - _YEAR + timedelta(days=1)})
    figure = _as_figure(name, "ttm", fact, None)
    change = round((value / prior - 1.0) * 100.0, 2) if prior and prior > 0 else None
    how = "" if latest == annual.end else f"derived: {source.concept} FY + YTD - prior YTD"
    return figure.model_copy(
        update={"year_ago": prior, "change_pct": change, "concept": how or source.concept}
    )


def _flow_figures(name: str, history: list[Fact]) -> list[Figure]:
    figures: list[Figure | None] = []
    annuals = [f for f in history if _is_annual(f)]
    quarters = [f for f in history if _is_quarter(f)]
    if annuals:
        figures.append(_as_figure(name, "annual", annuals[-1], _year_ago(annuals[-1], annuals)))
        figures.append(_ttm_figure(name, history, annuals))
    if quarters:
        figures.append(_as_figure(name, "quarter", quarters[-1], _year_ago(quarters[-1], quarters)))
    return [f for f in figures if f is not None]


def _stock_figure(name: str, history: list[Fact]) -> Figure | None:
    instants = [f for f in history if f.start is None]
    if not instants:
        return None
    return _as_figure(name, "instant", instants[-1], _year_ago(instants[-1], instants))


def _current(figures: list[Figure]) -> tuple[list[Figure], list[str]]:
    """Leave out figures of an older period than the company's latest of the same kind
    (an item it stopped reporting under the concepts read here), naming each."""
    latest: dict[Period, date] = {}
    for f in figures:
        if f.name != "shares_outstanding":  # dated by the cover page, after the period
            latest[f.period] = max(latest.get(f.period, f.period_end), f.period_end)
    kept, stale = [], []
    for f in figures:
        reference = latest.get(f.period)
        if f.name != "shares_outstanding" and reference and (reference - f.period_end).days > 31:
            stale.append(f"{f.name} ({f.period}): not reported for the period ending {reference}")
        else:
            kept.append(f)
    return kept, stale


# -- ratios --------------------------------------------------------------------------------


def _ratio(a: float | None, b: float | None, scale: float = 1.0) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return round(a / b * scale, 3)


def _value(figures: dict[tuple[str, Period], Figure], name: str, *periods: Period) -> float | None:
    for period in periods:
        found = figures.get((name, period))
        if found is not None:
            return found.value
    return None


def _derived(figures: dict[tuple[str, Period], Figure]) -> list[Figure]:
    """Gross profit from revenue - cost of revenue, and free cash flow = CFO - capex."""
    out = []
    for period in ("annual", "quarter", "ttm"):
        pairs = (
            ("gross_profit", "revenue", "cost_of_revenue", "revenue - cost of revenue"),
            ("free_cash_flow", "operating_cash_flow", "capex", "operating cash flow - capex"),
        )
        for name, plus, minus, how in pairs:
            a, b = figures.get((plus, period)), figures.get((minus, period))
            if (name, period) in figures or a is None or b is None or a.period_end != b.period_end:
                continue
            prior = None
            if a.year_ago is not None and b.year_ago is not None:
                prior = a.year_ago - b.year_ago
            value = a.value - b.value
            change = round((value / prior - 1) * 100, 2) if prior and prior > 0 else None
            out.append(
                a.model_copy(
                    update={
                        "name": name,
                        "value": value,
                        "concept": f"derived: {how}",
                        "year_ago": prior,
                        "change_pct": change,
                    }
                )
            )
    return out


def _change(by: dict[tuple[str, Period], Figure], name: str) -> float | None:
    """The change over a year of the trailing figure, else of the fiscal year."""
    for period in ("ttm", "annual"):
        found = by.get((name, period))
        if found is not None and found.change_pct is not None:
            return found.change_pct
    return None


def _ratios(by: dict[tuple[str, Period], Figure]) -> dict[str, float | None]:
    revenue = _value(by, "revenue", "ttm", "annual")
    debt_parts = [_value(by, n, "instant") for n in ("long_term_debt", "current_debt")]
    paper = _value(by, "commercial_paper", "instant")
    total_debt = None
    if any(p is not None for p in debt_parts):
        total_debt = sum(p for p in (*debt_parts, paper) if p is not None)
    cash = _value(by, "cash", "instant")
    equity = _value(by, "stockholders_equity", "instant")
    growth = _change(by, "revenue")
    eps = _change(by, "eps_diluted")
    return {
        "gross_margin_pct": _ratio(_value(by, "gross_profit", "ttm", "annual"), revenue, 100),
        "operating_margin_pct": _ratio(
            _value(by, "operating_income", "ttm", "annual"), revenue, 100
        ),
        "net_margin_pct": _ratio(_value(by, "net_income", "ttm", "annual"), revenue, 100),
        "fcf_margin_pct": _ratio(_value(by, "free_cash_flow", "ttm", "annual"), revenue, 100),
        "revenue_growth_pct": growth,
        "eps_growth_pct": eps,
        "current_ratio": _ratio(
            _value(by, "current_assets", "instant"), _value(by, "current_liabilities", "instant")
        ),
        "total_debt": total_debt,
        "net_debt": total_debt - cash if total_debt is not None and cash is not None else None,
        "debt_to_equity": _ratio(total_debt, equity) if equity and equity > 0 else None,
        "free_cash_flow": _value(by, "free_cash_flow", "ttm", "annual"),
    }


def _valuation(
    by: dict[tuple[str, Period], Figure],
    ratios: dict[str, float | None],
    price: tuple[float, date, str],
) -> Valuation:
    value, day, basis = price
    shares = _value(by, "shares_outstanding", "instant")
    cap = value * shares if shares else None
    eps = _value(by, "eps_diluted", "ttm", "annual")
    debt, cash = ratios.get("total_debt"), _value(by, "cash", "instant")
    ev = cap + (debt or 0.0) - (cash or 0.0) if cap is not None else None
    operating = _value(by, "operating_income", "ttm", "annual")
    amortization = _value(by, "depreciation_amortization", "ttm", "annual")
    ebitda = (
        operating + amortization if operating is not None and amortization is not None else None
    )
    equity = _value(by, "stockholders_equity", "instant")
    fcf = ratios.get("free_cash_flow")
    return Valuation(
        price=value,
        price_date=day,
        price_basis=basis,
        market_cap=cap,
        enterprise_value=ev,
        pe_ratio=_ratio(value, eps) if eps and eps > 0 else None,
        ps_ratio=_ratio(cap, _value(by, "revenue", "ttm", "annual")),
        pb_ratio=_ratio(cap, equity) if equity and equity > 0 else None,
        ev_to_ebitda=_ratio(ev, ebitda) if ebitda and ebitda > 0 else None,
        fcf_yield_pct=_ratio(fcf, cap, 100),
    )


def statements(
    facts: Fundamentals, as_of: datetime, price: tuple[float, date, str] | None = None
) -> Statements:
    """Key figures, ratios and (given ``(price, its date, its basis)``) valuation of the
    facts known at ``as_of``."""
    known = [f for f in facts.items if f.known_at <= as_of]
    by_concept: dict[str, list[Fact]] = {}
    for fact in known:
        by_concept.setdefault(fact.concept, []).append(fact)
    figures: list[Figure] = []
    for name, concepts, unit in FLOWS:
        figures += _flow_figures(name, _history(by_concept, concepts, unit))
    for name, concepts, unit in STOCKS:
        figure = _stock_figure(name, _history(by_concept, concepts, unit))
        figures += [figure] if figure is not None else []
    figures, stale = _current(figures)
    by = {(f.name, f.period): f for f in figures}
    derived = _derived(by)
    figures += derived
    by |= {(f.name, f.period): f for f in derived}
    ratios = _ratios(by)
    names = {f.name for f in figures}
    missing = [f"{n}: not reported" for n, _, _ in (*FLOWS, *STOCKS) if n not in names]
    missing += stale
    valuation = _valuation(by, ratios, price) if price is not None and figures else None
    if not figures:
        missing.append(f"statements: none filed by {as_of.date()}")
    last = max(known, key=lambda f: f.known_at, default=None)
    return Statements(
        as_of=as_of,
        figures=figures,
        last_filed=last.filed if last else None,
        last_form=last.form if last else None,
        last_accession=last.accession_number if last else None,
        valuation=valuation,
        missing=missing,
        **ratios,
    )

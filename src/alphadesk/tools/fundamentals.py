"""``get_fundamentals``: statements, ratios and valuation as known at the run's instant.

The figures come from SEC company facts (the bundled EDGAR archive, company-facts files in
the ``local`` folder, or the online ``sec`` provider), each counted from its filing's
acceptance time; the computation is :func:`alphadesk.data.fundamentals.statements`.
Valuation divides by the price the market data gives at ``as_of`` and states its basis;
it is withheld, and says why, when that price was back-adjusted for later splits (it
would not match the per-share figures as reported at the time).
"""

from __future__ import annotations

import asyncio
from datetime import date, datetime

from pydantic import Field

from alphadesk.agent import RunContext, Toolset, tool
from alphadesk.data.base import MarketData
from alphadesk.data.calendar import local_date
from alphadesk.data.errors import DataError
from alphadesk.data.fundamentals import Figure, Statements, statements
from alphadesk.data.models import Quote
from alphadesk.tools.common import ToolOutput, absent, source_of, try_market
from alphadesk.tools.deps import ToolDeps
from alphadesk.tools.once import once_per_step

__all__ = ["FUNDAMENTALS_TOOLS", "FundamentalsReport", "KeyFigure", "get_fundamentals"]

KeyFigure = Figure


class FundamentalsReport(ToolOutput):
    """Key statement figures, ratios and valuation as filed by the run's instant."""

    available: bool
    last_filed: date | None = None
    last_form: str | None = None
    last_accession: str | None = Field(None, description="EDGAR accession of the last filing.")
    figures: list[KeyFigure] = Field(default_factory=list, max_length=60)
    gross_margin_pct: float | None = Field(None, description="Trailing (else annual), %.")
    operating_margin_pct: float | None = None
    net_margin_pct: float | None = None
    fcf_margin_pct: float | None = None
    revenue_growth_pct: float | None = Field(None, description="Trailing revenue vs a year ago.")
    eps_growth_pct: float | None = None
    current_ratio: float | None = Field(None, description="Current assets / liabilities.")
    total_debt: float | None = None
    net_debt: float | None = None
    debt_to_equity: float | None = Field(None, description="Total debt / equity.")
    free_cash_flow: float | None = Field(None, description="Trailing (else annual) CFO - capex.")
    operating_cash_flow: float | None = None
    price: float | None = None
    price_date: date | None = None
    price_basis: str | None = Field(None, max_length=400)
    market_cap: float | None = Field(None, description="price x shares outstanding (cover).")
    enterprise_value: float | None = None
    pe_ratio: float | None = Field(None, description="price / trailing diluted EPS.")
    ps_ratio: float | None = None
    pb_ratio: float | None = None
    ev_to_ebitda: float | None = None
    fcf_yield_pct: float | None = None


def _basis(quote: Quote) -> str:
    kind = {
        "close": "close",
        "adj_close": "adjusted close (embeds later splits and dividends)",
        "last_trade": "last trade",
    }[quote.basis]
    return (
        f"{quote.provenance.provider} {kind} of {local_date(quote.observed_at)}; EPS and "
        "shares outstanding as reported in the filings (not adjusted for later splits)"
    )


async def _quote(market: MarketData, symbol: str, as_of: datetime) -> tuple[Quote | None, str]:
    """The price at ``as_of``, or why there is none (a company with statements but no
    price is still answered: only its valuation is missing)."""
    try:
        return await asyncio.to_thread(market.quote, symbol, as_of), ""
    except DataError as exc:
        return None, f"no price at as_of ({exc})"


def _mixes_bases(quote: Quote) -> bool:
    """Whether the price was adjusted for splits after its date (a back-adjusted close):
    then it cannot be set against per-share figures as reported at the time."""
    if quote.basis == "adj_close":
        return True
    return not quote.as_traded and "split-adjusted" in " ".join(quote.provenance.notes).lower()


def _report_fields(found: Statements) -> dict[str, object]:
    fields = found.model_dump(exclude={"as_of", "figures", "valuation", "missing"})
    cfo = found.figure("operating_cash_flow", "ttm") or found.figure(
        "operating_cash_flow", "annual"
    )
    fields["operating_cash_flow"] = cfo.value if cfo else None
    if found.valuation is not None:
        fields |= found.valuation.model_dump()
    return fields


@tool
@once_per_step
async def get_fundamentals(ctx: RunContext[ToolDeps], symbol: str) -> FundamentalsReport:
    """Key financial-statement figures, ratios and valuation of a company, as filed by the
    run's instant.

    A figure counts from its filing's acceptance on EDGAR, and a restated period shows its
    latest value filed by then. Returns revenue, cost of revenue, gross profit, operating
    and net income, diluted EPS, operating cash flow, capex, free cash flow and D&A (latest
    fiscal year, latest quarter and trailing twelve months, each with the change over a
    year and the filing's accession number), the latest balance sheet (cash, assets,
    liabilities, debt, equity, shares outstanding), margins, growth, current ratio, debt to
    equity, and P/E, P/S, P/B, EV/EBITDA and FCF yield at the price of the run's instant
    (price_basis says which price). Figures the filings lack are listed in missing, never
    estimated. available is false when no provider has fundamentals.

    Args:
        symbol: Ticker, e.g. "MSFT".
    """
    market = ctx.deps.market
    facts, reason = await try_market(
        ctx, symbol, "fundamentals", market.fundamentals, symbol, ctx.as_of
    )
    if facts is None:
        return absent(FundamentalsReport, ctx, symbol, reason)
    quote, price_reason = await _quote(market, facts.symbol, ctx.as_of)
    price = None
    if quote is not None and _mixes_bases(quote):
        price_reason = (
            f"withheld: the {quote.provenance.provider} price of "
            f"{local_date(quote.observed_at)} embeds splits made after it, while EPS and "
            "shares outstanding are as reported then; ratios of the two would mix bases"
        )
    elif quote is not None:
        price = (quote.price, local_date(quote.observed_at), _basis(quote))
    found = statements(facts, ctx.as_of, price)
    missing = [*facts.provenance.missing, *found.missing]
    if price_reason:
        missing.append(f"valuation: {price_reason}")
    missing += [f"note: {n}" for n in facts.provenance.notes]
    missing += [f"skipped {a.provider}: {a.message}" for a in facts.provenance.attempts]
    return FundamentalsReport(
        symbol=facts.symbol,
        as_of=ctx.as_of,
        source=source_of(facts.provenance),
        missing=missing,
        available=bool(found.figures),
        figures=found.figures,
        **_report_fields(found),
    )


FUNDAMENTALS_TOOLS = Toolset.of("fundamentals", [get_fundamentals])

"""Typed results of the market-data layer (everything except bars, see :mod:`.bars`).

Two shapes exist, and the point-in-time filter knows both:

* a :class:`Timeline` holds records that each carry ``known_at``, the instant the record
  became public (a news item's publication, a filing's acceptance, a statement's filing);
* a :class:`Snapshot` is one observation of a state (a quote, an option chain, a short
  interest figure, an instrument's identity) made at ``observed_at``.

Each result carries :class:`Provenance`: which provider answered, whether the numbers were
observed or modeled, when they were retrieved and what the source lacked.
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Generic, Literal, TypeVar

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "AnalystRating",
    "AnalystRatings",
    "AssetType",
    "Attempt",
    "Coverage",
    "Earnings",
    "EarningsEvent",
    "Fact",
    "Filing",
    "Filings",
    "Fundamentals",
    "Instrument",
    "News",
    "NewsItem",
    "OptionChain",
    "OptionContract",
    "Origin",
    "Provenance",
    "Quote",
    "ShortInterest",
    "Snapshot",
    "Timeline",
]

Origin = Literal["observed", "modeled"]
AssetType = Literal["equity", "etf", "index", "crypto", "fund", "future", "currency", "other"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Attempt(_Frozen):
    """A provider a chain tried before the one that answered, and why it did not."""

    provider: str
    error: str = Field(description="The error type, e.g. NoData or NotSupported.")
    message: str


class Provenance(_Frozen):
    """Where a result came from."""

    provider: str = Field(description="The provider that answered, e.g. bundled or yahoo.")
    origin: Origin = Field(description="observed (from a market source) or modeled.")
    retrieved_at: AwareDatetime = Field(description="When the provider read or fetched it.")
    source: str = Field("", description="The dataset or endpoint behind the provider.")
    notes: list[str] = Field(default_factory=list, description="Caveats worth knowing.")
    missing: list[str] = Field(
        default_factory=list, description="Fields or parts the source does not have."
    )
    attempts: list[Attempt] = Field(
        default_factory=list, description="Providers tried first, in order, and why they failed."
    )


class Snapshot(_Frozen):
    """One observation of a state, made at ``observed_at``."""

    symbol: str
    observed_at: AwareDatetime = Field(description="When the state was observed.")
    provenance: Provenance


class Quote(Snapshot):
    """The latest price known at an instant."""

    price: float = Field(description="Last trade, or the last close for daily data.")
    bid: float | None = None
    ask: float | None = None
    volume: float | None = Field(None, description="Volume of the session of the price.")
    basis: Literal["last_trade", "close", "adj_close"] = Field(
        description="What `price` is: a live last trade, or a daily (adjusted) close."
    )
    as_traded: bool = Field(
        False,
        description="True when the provider knows `price` is as traded that day (no later "
        "split applied); False when it cannot say.",
    )


class OptionContract(_Frozen):
    """One listed option at one strike and expiration."""

    contract_symbol: str | None = Field(None, description="OCC symbol, when the source has it.")
    option_type: Literal["call", "put"]
    strike: float
    expiration: date
    dte: int = Field(description="Calendar days from the as-of date to expiration.")
    trading_days: int = Field(description="XNYS sessions left, the expiration day included.")
    bid: float | None
    ask: float | None
    last: float | None
    volume: int | None
    open_interest: int | None
    iv: float | None = Field(description="Implied volatility, annualised decimal (0.25 = 25 %).")
    delta: float | None = None
    gamma: float | None = None
    theta: float | None = Field(None, description="Per calendar day.")
    vega: float | None = Field(None, description="Per volatility point.")
    rho: float | None = Field(None, description="Per percentage point of rate.")
    in_the_money: bool
    last_trade_at: AwareDatetime | None = None

    @property
    def mid(self) -> float | None:
        """Midpoint of bid and ask, when both exist."""
        if self.bid is None or self.ask is None:
            return None
        return (self.bid + self.ask) / 2.0


class OptionChain(Snapshot):
    """Calls and puts of every expiration in a window, as known at ``as_of``."""

    as_of: AwareDatetime
    underlying_price: float
    rate: float = Field(description="Risk-free rate used for Greeks, continuous decimal.")
    dividend_yield: float = Field(0.0, description="Continuous decimal.")
    expirations: list[date]
    contracts: list[OptionContract]

    def select(
        self, option_type: Literal["call", "put"] | None = None, expiration: date | None = None
    ) -> list[OptionContract]:
        """Contracts of one type and/or expiration, in (expiration, strike) order."""
        chosen = [
            c
            for c in self.contracts
            if (option_type is None or c.option_type == option_type)
            and (expiration is None or c.expiration == expiration)
        ]
        return sorted(chosen, key=lambda c: (c.expiration, c.strike, c.option_type))

    def to_frame(self) -> pd.DataFrame:
        """All contracts as a frame (one row per contract, with a ``mid`` column)."""
        import pandas as pd

        frame = pd.DataFrame([c.model_dump() for c in self.contracts])
        if not frame.empty:
            frame["mid"] = (frame["bid"] + frame["ask"]) / 2.0
        return frame


class Instrument(Snapshot):
    """What a symbol is."""

    name: str
    asset_type: AssetType
    exchange: str | None = None
    sector: str | None = None
    industry: str | None = None
    currency: str | None = "USD"


class ShortInterest(Snapshot):
    """Short interest as last reported (exchanges report twice a month, with a lag)."""

    shares_short: float | None
    short_percent_of_float: float | None = Field(description="Decimal: 0.05 = 5 %.")
    days_to_cover: float | None
    shares_short_prior_month: float | None = None
    settlement_date: date | None = Field(None, description="The date the figure refers to.")


class _Record(_Frozen):
    known_at: AwareDatetime = Field(description="When this became public.")


RecordT = TypeVar("RecordT", bound=_Record)


class Timeline(_Frozen, Generic[RecordT]):
    """Records of one symbol, each stamped with when it became public, oldest first."""

    symbol: str
    items: list[RecordT]
    provenance: Provenance

    def __len__(self) -> int:
        return len(self.items)


class NewsItem(_Record):
    """A news article; ``known_at`` is its publication time."""

    title: str
    publisher: str | None = None
    url: str | None = None
    summary: str | None = None
    tickers: list[str] = Field(default_factory=list)


class News(Timeline[NewsItem]):
    """News about a symbol, by publication time."""


class DividendRecord(_Record):
    """A cash dividend; ``known_at`` is its declaration (else its ex-date's open)."""

    ex_date: date = Field(
        description="The first session traded without it; holders at the previous close are paid."
    )
    amount: float = Field(description="Cash per share as traded on the ex-date.")
    basis_amount: float = Field(
        description="Cash per share in the shares of the answer's as_of (the basis of the "
        "daily bars read then): amount divided by the splits effective after the ex-date."
    )
    declared: date | None = None
    pay_date: date | None = None


class Dividends(Timeline[DividendRecord]):
    """A symbol's cash dividends declared by ``as_of``, by declaration (ex-dates may be later)."""


class EarningsEvent(_Record):
    """An earnings release; ``known_at`` is the release time (or when it was announced)."""

    time: AwareDatetime = Field(description="When results are (or were) released.")
    eps_estimate: float | None = None
    eps_actual: float | None = None
    surprise_pct: float | None = Field(None, description="Percent, e.g. 4.2 = +4.2 %.")


class Earnings(Timeline[EarningsEvent]):
    """Earnings releases known at an instant. An upcoming one appears only when its date
    had been announced by then."""

    def upcoming(self, after: AwareDatetime) -> list[EarningsEvent]:
        """Events scheduled after ``after``."""
        return [e for e in self.items if e.time > after]


class AnalystRating(_Record):
    """A rating action by one firm; ``known_at`` is when it was published."""

    firm: str
    to_grade: str | None = None
    from_grade: str | None = None
    action: str | None = Field(None, description="up, down, main, init, reit...")
    price_target: float | None = None


class AnalystRatings(Timeline[AnalystRating]):
    """Rating actions, by publication time."""


class Filing(_Record):
    """An SEC filing; ``known_at`` is its acceptance time on EDGAR."""

    form: str
    filing_date: date
    report_date: date | None = None
    accession_number: str
    primary_document: str | None = None
    description: str | None = None
    url: str | None = None
    items: list[str] = Field(
        default_factory=list, description="8-K item codes, e.g. 2.02 (results of operations)."
    )


class Filings(Timeline[Filing]):
    """SEC filings, by acceptance time."""


class Fact(_Record):
    """One reported value of a financial-statement concept; ``known_at`` is its filing's
    EDGAR acceptance time, or, when that is not known, the open of the first session after
    its ``filed`` date, so a statement is never used before it was public."""

    taxonomy: str = "us-gaap"
    concept: str
    unit: str
    value: float
    start: date | None = Field(None, description="Period start (None for instants).")
    end: date = Field(description="Period end, or the instant of a balance-sheet value.")
    filed: date
    form: str | None = None
    fiscal_year: int | None = None
    fiscal_period: str | None = None
    accession_number: str | None = None


class Fundamentals(Timeline[Fact]):
    """Financial-statement facts by filing date."""

    def concepts(self) -> list[str]:
        """The concepts present, sorted."""
        return sorted({f.concept for f in self.items})

    def history(self, concept: str, unit: str | None = None) -> list[Fact]:
        """One value per period of ``concept``: the latest filed one (restatements win)."""
        latest: dict[tuple[date | None, date, str], Fact] = {}
        for fact in self.items:
            if fact.concept != concept or (unit is not None and fact.unit != unit):
                continue
            key = (fact.start, fact.end, fact.unit)
            if key not in latest or fact.known_at >= latest[key].known_at:
                latest[key] = fact
        return sorted(latest.values(), key=lambda f: (f.end, f.start or f.end))

    def latest(self, concept: str, unit: str | None = None) -> Fact | None:
        """The value of ``concept`` for its most recent period, or None."""
        history = self.history(concept, unit)
        return history[-1] if history else None


class Coverage(_Frozen):
    """What a provider holds for one symbol (for `alphadesk data list`)."""

    symbol: str
    provider: str
    name: str | None = None
    asset_type: AssetType | None = None
    fields: list[str]
    start: date | None
    end: date | None
    rows: int | None = None
    source: str = ""
    fundamentals: str | None = Field(
        None, description="Years of statement facts filed, e.g. 2009-2024 (None: none)."
    )
    earnings: str | None = Field(
        None, description="Years of earnings releases (8-K item 2.02), e.g. 2011-2024."
    )
    ranges: list[tuple[date, date]] = Field(
        default_factory=list,
        description="Runs of consecutive sessions with bars; a gap between two is a hole.",
    )
    news: str | None = Field(
        None, description="Days of bundled news and its item count, e.g. 2024-12-31..2025-07-28."
    )

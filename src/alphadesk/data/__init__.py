"""Market data: providers behind one protocol, point-in-time by construction.

Build the provider from the settings and ask it questions about an instant::

    from alphadesk.data import build_provider
    market = build_provider(settings)
    bars = market.daily_bars("AAPL", as_of)        # Bars: nothing closed after as_of
    chain = market.option_chain("AAPL", as_of)     # observed if a source has it, else modeled

Every result carries ``provenance`` (provider, observed or modeled, retrieved at, what was
missing, which providers were tried first). Failures are typed :class:`DataError`\\ s.
"""

from .bars import BAR_FIELDS, Bars
from .base import DataKind, IvHistorySource, MarketData, Provider
from .calendar import MarketStatus, market_status
from .chain import ProviderChain
from .errors import (
    DataError,
    InvalidData,
    InvalidSymbol,
    MalformedResponse,
    NoData,
    NotConfigured,
    NotSupported,
    ProviderUnavailable,
    RateLimited,
)
from .factory import build_provider
from .models import (
    AnalystRating,
    AnalystRatings,
    Attempt,
    Coverage,
    Earnings,
    EarningsEvent,
    Fact,
    Filing,
    Filings,
    Fundamentals,
    Instrument,
    News,
    NewsItem,
    OptionChain,
    OptionContract,
    Provenance,
    Quote,
    ShortInterest,
)
from .pit import LIVE_GRACE, point_in_time
from .symbols import normalize_symbol

__all__ = [
    "BAR_FIELDS",
    "LIVE_GRACE",
    "AnalystRating",
    "AnalystRatings",
    "Attempt",
    "Bars",
    "Coverage",
    "DataError",
    "DataKind",
    "Earnings",
    "EarningsEvent",
    "Fact",
    "Filing",
    "Filings",
    "Fundamentals",
    "Instrument",
    "InvalidData",
    "InvalidSymbol",
    "IvHistorySource",
    "MalformedResponse",
    "MarketData",
    "MarketStatus",
    "News",
    "NewsItem",
    "NoData",
    "NotConfigured",
    "NotSupported",
    "OptionChain",
    "OptionContract",
    "Provenance",
    "Provider",
    "ProviderChain",
    "ProviderUnavailable",
    "Quote",
    "RateLimited",
    "ShortInterest",
    "build_provider",
    "market_status",
    "normalize_symbol",
    "point_in_time",
]

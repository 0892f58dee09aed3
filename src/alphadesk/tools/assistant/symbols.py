"""Symbols named in a question, resolved against the data providers.

A mention resolves as a ticker the providers hold (``nvda``), a company name they list
(``apple`` -> AAPL), a common alias (``S&P 500`` -> ^GSPC, ``bitcoin`` -> BTC-USD) or a
proxy (SPY, modeled from the S&P 500 index by the tools that need it). When a provider
cannot list its symbols (an online one), a well-formed ticker is accepted as
``unverified``. Anything else is unresolved, with close matches to offer the user.
"""

from __future__ import annotations

import asyncio
import re
from typing import Literal

from pydantic import BaseModel, Field

from alphadesk.agent import RunContext, Toolset, tool
from alphadesk.data.base import DataKind, MarketData
from alphadesk.data.errors import InvalidSymbol
from alphadesk.data.symbols import close_matches, normalize_symbol
from alphadesk.tools.deps import ToolDeps

__all__ = ["SYMBOL_TOOLS", "SymbolLookup", "SymbolMatch", "resolve_symbol", "resolve_symbols"]

_ALIASES = {
    "S&P 500": "^GSPC",
    "S&P500": "^GSPC",
    "S&P": "^GSPC",
    "SP500": "^GSPC",
    "SPX": "^GSPC",
    "GSPC": "^GSPC",
    "NASDAQ": "^IXIC",
    "VIX": "^VIX",
    "BITCOIN": "BTC-USD",
    "BTC": "BTC-USD",
    "GOOGLE": "GOOG",
    "GOOGL": "GOOG",
    "META": "FB",
}
_PROXIES = {"SPY": "^GSPC"}  # tools model SPY from the index when no provider has it
_MIN_NAME = 3

Basis = Literal["ticker", "name", "alias", "proxy", "unverified"]


class SymbolMatch(BaseModel):
    """How one mention resolved."""

    query: str
    symbol: str | None = Field(None, description="The canonical ticker; None: unresolved.")
    name: str | None = None
    asset_type: str | None = None
    basis: Basis | None = None
    close_matches: list[str] = Field(default_factory=list)


def _listing(market: MarketData) -> tuple[dict[str, tuple[str | None, str | None]], bool]:
    """Symbol -> (name, asset type) of every listed symbol, and whether the listing is
    complete (every provider of daily bars can list its symbols)."""
    listed: dict[str, tuple[str | None, str | None]] = {
        c.symbol: (c.name, c.asset_type) for c in market.coverage()
    }
    for symbol in market.universe():
        listed.setdefault(symbol, (None, None))
    members = getattr(market, "providers", None) or [market]
    bar_sources = [p for p in members if p.supports(DataKind.DAILY_BARS)]
    complete = all(p.universe() for p in bar_sources)
    return listed, complete


def resolve_symbol(
    query: str, listed: dict[str, tuple[str | None, str | None]], complete: bool
) -> SymbolMatch:
    """Resolve one mention against a listing (see the module docstring)."""
    text = query.strip().lstrip("$")
    upper = text.upper()

    def found(symbol: str, basis: Basis) -> SymbolMatch:
        name, kind = listed.get(symbol, (None, None))
        return SymbolMatch(query=query, symbol=symbol, name=name, asset_type=kind, basis=basis)

    if upper in _ALIASES and _ALIASES[upper] in listed:
        return found(_ALIASES[upper], "alias")
    try:
        ticker = normalize_symbol(text)
    except InvalidSymbol:
        ticker = None
    if ticker is not None and ticker in listed:
        return found(ticker, "ticker")
    if ticker in _PROXIES and _PROXIES[ticker] in listed:
        return SymbolMatch(query=query, symbol=ticker, name="SPDR S&P 500 ETF", basis="proxy")
    by_name = _by_name(text, listed)
    if by_name is not None:
        return found(by_name, "name")
    if ticker is not None and not complete:
        return SymbolMatch(query=query, symbol=ticker, basis="unverified")
    matches = close_matches(ticker or upper, list(listed)) if upper else []
    return SymbolMatch(query=query, close_matches=matches)


def _by_name(text: str, listed: dict[str, tuple[str | None, str | None]]) -> str | None:
    if len(text) < _MIN_NAME:
        return None
    pattern = re.compile(rf"\b{re.escape(text.lower())}\b")
    hits = [s for s, (name, _) in listed.items() if name and pattern.search(name.lower())]
    return hits[0] if len(hits) == 1 else None


def resolve_symbols(market: MarketData, queries: list[str]) -> list[SymbolMatch]:
    """Resolve every mention (duplicates kept once, in order)."""
    listed, complete = _listing(market)
    return [resolve_symbol(q, listed, complete) for q in dict.fromkeys(queries) if q.strip()]


class SymbolLookup(BaseModel):
    matches: list[SymbolMatch]


@tool
async def lookup_symbols(ctx: RunContext[ToolDeps], queries: list[str]) -> SymbolLookup:
    """Resolve tickers or company names to the symbols the data providers hold.

    Each mention resolves as a ticker, a company name, an alias (S&P 500, bitcoin) or a
    proxy (SPY); an unknown one comes back with close matches to offer the user.

    Args:
        queries: Mentions from the question, e.g. ["nvidia", "AMD", "S&P 500"].
    """
    matches = await asyncio.to_thread(resolve_symbols, ctx.deps.market, queries)
    return SymbolLookup(matches=matches)


SYMBOL_TOOLS = Toolset.of("symbols", [lookup_symbols])

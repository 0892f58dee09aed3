"""How deep each name of a book is decided on a day, computed from the data alone (no
model).

A book decides the same names every session, and on most sessions little about most
names has changed. :func:`triage` walks each name's decision dates in order and makes one
of three calls, comparing the day with the name's last decision (of either depth):

- ``full``, the whole desk (every analyst, the debates): the name has no earlier
  decision; or ``every`` sessions (default 5) have passed since its last decision; or
  its close has moved since then by more than ``move`` (default 2) times its daily
  volatility (the standard deviation of its last ``window``, default 20, daily log
  returns at the last decision); or a filing was accepted since then;
- ``update``, the desk at :data:`UPDATE` depth: news was published since then and
  nothing above holds. The news analyst reads it, and the manager, the trader and the
  judge decide on its report and the day's fact sheet, without debates: what changed is
  the news, and a price within its usual range;
- ``carry``: nothing of the above; the name carries its last decision.

Every read is made inside the day's decision scope behind the look-ahead guard
(:mod:`.lookahead`): a triage that read past its day would raise, not decide. The
thresholds are round numbers fixed before the triage was first run on any window, and
nothing was tuned on the benchmark's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from alphadesk.config import DeskSettings
from alphadesk.data.base import MarketData
from alphadesk.data.calendar import local_date, sessions_between
from alphadesk.data.errors import DataError

from .lookahead import guard
from .models import DecisionRecord
from .scope import decision

__all__ = ["UPDATE", "Ask", "Call", "TriageRules", "carried", "triage"]

Ask = Literal["full", "update", "carry"]

# The desk an update asks: the news analyst, no debate rounds.
UPDATE = DeskSettings(analysts=["news"], rounds=0, risk_rounds=0)


class TriageRules(BaseModel):
    """When a name needs the desk again (see the module docstring)."""

    model_config = ConfigDict(frozen=True)

    every: int = Field(5, ge=1, description="Sessions after which the desk decides again.")
    move: float = Field(2.0, gt=0, description="A move, in daily volatilities, that asks it.")
    window: int = Field(20, ge=2, description="Daily returns the volatility is measured on.")


class Call(BaseModel):
    """The triage of one name on one day: the whole desk asked (``full``), its update
    asked, or the decision of ``since`` carried; ``reason`` says why, in words."""

    model_config = ConfigDict(frozen=True)

    symbol: str
    as_of: datetime
    ask: Ask
    since: datetime | None = None
    reason: str


def triage(
    market: MarketData,
    symbols: Sequence[str],
    dates: Sequence[datetime],
    rules: TriageRules | None = None,
) -> list[Call]:
    """Each name's call on each of ``dates`` (in order), by ``rules``, reading ``market``
    as of each day only."""
    rules = rules or TriageRules()
    seen = guard(market)
    return [call for symbol in symbols for call in _walk(seen, symbol, dates, rules)]


def carried(call: Call, last: DecisionRecord) -> DecisionRecord:
    """``last`` (the full decision of ``call.since``) carried to ``call``'s day."""
    return last.model_copy(
        update={
            "as_of": call.as_of,
            "reason": call.reason,
            "model_calls": 0,
            "model_cost_usd": 0.0,
            "live_calls": 0,
            "run_id": None,
        }
    )


def _walk(
    market: MarketData, symbol: str, dates: Sequence[datetime], rules: TriageRules
) -> list[Call]:
    calls: list[Call] = []
    last: datetime | None = None
    sigma = math.nan
    for day in dates:
        with decision(symbol, day):
            if last is None:
                ask, why = "full", "first decision"
            else:
                ask, why = _material(market, symbol, last, day, sigma, rules)
            if ask == "carry" and last is not None:
                said = f"carried: nothing material since {local_date(last).isoformat()}: {why}"
                calls.append(Call(symbol=symbol, as_of=day, ask=ask, since=last, reason=said))
                continue
            calls.append(Call(symbol=symbol, as_of=day, ask=ask, reason=why))
            last, sigma = day, _volatility(market, symbol, day, rules.window)
    return calls


def _material(
    market: MarketData,
    symbol: str,
    last: datetime,
    day: datetime,
    sigma: float,
    rules: TriageRules,
) -> tuple[Ask, str]:
    """How ``symbol`` is decided at ``day``, and why (for a carry: what was seen)."""
    since = local_date(last).isoformat()
    elapsed = len(sessions_between(local_date(last), local_date(day))) - 1
    if elapsed >= rules.every:
        return "full", f"{elapsed} sessions since {since}"
    closes = _closes(market, symbol, day)
    before = closes[closes.index <= last]
    if before.empty or closes.empty or not sigma > 0:
        return "full", f"no volatility to compare a move with since {since}"
    move = abs(math.log(float(closes.iloc[-1]) / float(before.iloc[-1]))) / sigma
    if move > rules.move:
        return "full", f"a move of {move:.1f} daily volatilities since {since}"
    filings = _filings(market, symbol, last, day)
    if filings:
        return "full", f"{filings} filing{'s' if filings > 1 else ''} accepted since {since}"
    news = _news(market, symbol, last, day)
    if news:
        return "update", f"{news} news item{'s' if news > 1 else ''} since {since}"
    return "carry", f"move {move:.1f}σ, no news, no filing"


def _closes(market: MarketData, symbol: str, day: datetime) -> Any:
    bars = market.daily_bars(symbol, day)
    return bars.frame["close"].dropna()


def _volatility(market: MarketData, symbol: str, day: datetime, window: int) -> float:
    """The standard deviation of the last ``window`` daily log returns at ``day``."""
    try:
        closes = _closes(market, symbol, day).to_numpy(dtype=float)
    except DataError:
        return math.nan
    returns = np.diff(np.log(closes[-(window + 1) :]))
    return float(np.std(returns, ddof=1)) if returns.size >= 2 else math.nan


def _after(items: Sequence[Any], last: datetime) -> int:
    return sum(1 for item in items if item.known_at > last)


def _news(market: MarketData, symbol: str, last: datetime, day: datetime) -> int:
    try:
        return _after(market.news(symbol, day, days=(day - last).days + 1).items, last)
    except DataError:  # no news in the data for it: none known
        return 0


def _filings(market: MarketData, symbol: str, last: datetime, day: datetime) -> int:
    try:
        return _after(market.filings(symbol, day).items, last)
    except DataError:  # no filings in the data for it: none known
        return 0

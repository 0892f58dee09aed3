"""Turn what yfinance returns into alphadesk's typed results (no network here)."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime
from typing import Any

from ..calendar import bar_close_instants, end_of_day, local_date
from ..errors import MalformedResponse, NoData
from ..models import AnalystRating, EarningsEvent, NewsItem, OptionContract

__all__ = [
    "discount_to_continuous",
    "parse_bars",
    "parse_contracts",
    "parse_earnings",
    "parse_news",
    "parse_ratings",
]

_COLUMNS = {
    "Open": "open",
    "High": "high",
    "Low": "low",
    "Close": "close",
    "Adj Close": "adj_close",
    "Volume": "volume",
}
_MINUTES = {"1m": 1, "2m": 2, "5m": 5, "15m": 15, "30m": 30, "60m": 60, "90m": 90, "1h": 60}


def _num(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def parse_bars(raw: Any, symbol: str, interval: str, retrieved_at: datetime) -> Any:
    """A yfinance history frame as bar columns indexed by close time; bars still in
    progress at ``retrieved_at`` are dropped (their numbers are not final)."""
    import pandas as pd

    if raw is None or len(raw) == 0:
        raise NoData(
            f"Yahoo Finance returned no {interval} bars for {symbol}; check the "
            "symbol (Yahoo spells indices ^GSPC, classes BRK-B)",
            provider="yahoo",
        )
    if isinstance(raw.columns, pd.MultiIndex):  # yf.download with one ticker
        raw = raw.droplevel(1, axis=1) if raw.columns.nlevels > 1 else raw
    present = {c: _COLUMNS[c] for c in raw.columns if c in _COLUMNS}
    if "Close" not in present and "Adj Close" not in present:
        raise MalformedResponse(
            f"Yahoo bars for {symbol} have no Close column (got {list(raw.columns)})",
            provider="yahoo",
        )
    frame = raw[list(present)].rename(columns=present).astype("float64")
    index = pd.DatetimeIndex(raw.index)
    if index.tz is None:
        raise MalformedResponse(f"Yahoo bars for {symbol} have no time zone", provider="yahoo")
    if interval == "1d":
        closes = bar_close_instants(index.tz_localize(None).normalize(), tz=str(index.tz))
    else:
        closes = index + pd.Timedelta(minutes=_MINUTES[interval])
    frame.index = closes
    return frame[frame.index <= pd.Timestamp(retrieved_at)]


def parse_contracts(
    calls: Any, puts: Any, expiration: date, as_of: datetime, trading_days: int
) -> list[OptionContract]:
    """Contracts of one expiration from yfinance's calls and puts frames."""
    contracts = []
    dte = (expiration - local_date(as_of)).days
    for option_type, frame in (("call", calls), ("put", puts)):
        if frame is None:
            continue
        for row in frame.to_dict("records"):
            strike = _num(row.get("strike"))
            if strike is None:
                raise MalformedResponse("a Yahoo option row has no strike", provider="yahoo")
            iv = _num(row.get("impliedVolatility"))
            last_trade = row.get("lastTradeDate")
            contracts.append(
                OptionContract(
                    contract_symbol=row.get("contractSymbol"),
                    option_type=option_type,
                    strike=strike,
                    expiration=expiration,
                    dte=dte,
                    trading_days=trading_days,
                    bid=_num(row.get("bid")),
                    ask=_num(row.get("ask")),
                    last=_num(row.get("lastPrice")),
                    volume=_int(row.get("volume")),
                    open_interest=_int(row.get("openInterest")),
                    iv=iv if iv is not None and iv > 0.005 else None,
                    in_the_money=bool(row.get("inTheMoney", False)),
                    last_trade_at=_aware(last_trade),
                )
            )
    return contracts


def _int(value: Any) -> int | None:
    number = _num(value)
    return None if number is None else int(number)


def _aware(value: Any) -> datetime | None:
    import pandas as pd

    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    try:
        stamp = pd.Timestamp(value)
    except (TypeError, ValueError):
        return None
    if stamp is pd.NaT:
        return None
    return (stamp.tz_localize(UTC) if stamp.tz is None else stamp).to_pydatetime()


def parse_news(raw: Any, symbol: str) -> list[NewsItem]:
    """News items from yfinance's list (both the current ``content`` shape and the old one)."""
    if not isinstance(raw, list):
        raise MalformedResponse(f"Yahoo news for {symbol} is not a list", provider="yahoo")
    items = []
    for entry in raw:
        if not isinstance(entry, dict):
            continue
        content = entry.get("content") if isinstance(entry.get("content"), dict) else None
        if content is not None:
            published = _aware(content.get("pubDate") or content.get("displayTime"))
            provider = content.get("provider") or {}
            url = content.get("canonicalUrl") or content.get("clickThroughUrl") or {}
            title = content.get("title")
            publisher = provider.get("displayName") if isinstance(provider, dict) else None
            link = url.get("url") if isinstance(url, dict) else None
            summary = content.get("summary") or content.get("description") or None
        else:
            epoch = _num(entry.get("providerPublishTime"))
            published = datetime.fromtimestamp(epoch, UTC) if epoch is not None else None
            title, publisher = entry.get("title"), entry.get("publisher")
            link, summary = entry.get("link"), None
        if published is None or not title:
            continue  # an item without a time cannot be placed in time: skip it
        items.append(
            NewsItem(
                known_at=published,
                title=str(title),
                publisher=publisher,
                url=link,
                summary=summary,
                tickers=list(entry.get("relatedTickers") or []),
            )
        )
    return items


def parse_earnings(raw: Any, retrieved_at: datetime) -> list[EarningsEvent]:
    """Earnings rows. A past release is known at the end of its day (Yahoo's times are
    approximate); a scheduled one is known from the retrieval (when Yahoo listed it)."""
    events: list[EarningsEvent] = []
    if raw is None or len(raw) == 0:
        return events
    for stamp, row in raw.iterrows():
        when = _aware(stamp)
        if when is None:
            continue
        past = when <= retrieved_at
        known = min(end_of_day(local_date(when)), retrieved_at) if past else retrieved_at
        events.append(
            EarningsEvent(
                known_at=known,
                time=when,
                eps_estimate=_num(row.get("EPS Estimate")),
                eps_actual=_num(row.get("Reported EPS")) if past else None,
                surprise_pct=_num(row.get("Surprise(%)")) if past else None,
            )
        )
    return events


def parse_ratings(raw: Any) -> list[AnalystRating]:
    """Upgrades and downgrades; a date-only stamp (midnight UTC) counts from the day's end."""
    ratings: list[AnalystRating] = []
    if raw is None or len(raw) == 0:
        return ratings
    for stamp, row in raw.iterrows():
        when = _aware(stamp)
        if when is None:
            continue
        if when.astimezone(UTC).time() == datetime.min.time():
            when = end_of_day(when.astimezone(UTC).date())
        firm = row.get("Firm")
        if not firm:
            continue
        ratings.append(
            AnalystRating(
                known_at=when,
                firm=str(firm),
                to_grade=row.get("ToGrade") or None,
                from_grade=row.get("FromGrade") or None,
                action=row.get("Action") or None,
                price_target=_num(row.get("currentPriceTarget")),
            )
        )
    return ratings


def discount_to_continuous(discount_pct: float, days: int = 91) -> float:
    """A T-bill bank-discount yield (percent, as ^IRX quotes it) as a continuous rate."""
    price = 1.0 - discount_pct / 100.0 * days / 360.0
    return -math.log(price) * 365.0 / days

"""The ``bundled`` provider: real daily bars and news shipped inside the package (no network).

Files live in ``alphadesk/data/bundled/`` (see its ``manifest.json`` and ``NOTICE.md``,
rebuilt by ``scripts/build_bundled_data.py``). The manifest is read once per process and
each symbol's Parquet file the first time it is asked for; its SHA-256 is checked then.
Prices are stored as traded and served on the ``as_of`` basis with the splits of
``actions.csv`` (see :mod:`alphadesk.data.actions`). News (``news.parquet``) is known from
its publication instant, stored in UTC.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
from collections import OrderedDict
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path
from typing import Any, ClassVar

from ..actions import ActionTable, Split, dividend_timeline
from ..bars import Bars
from ..base import Clock, DataKind, Provider, utc_now
from ..errors import NoData, ProviderUnavailable
from ..models import (
    Coverage,
    Dividends,
    Earnings,
    Fact,
    Filings,
    Fundamentals,
    Instrument,
    News,
    NewsItem,
    Provenance,
    Quote,
)
from ..symbols import close_matches
from .sec_bundle import SecBundle

__all__ = ["BUNDLED_DIR", "BundledProvider"]

BUNDLED_DIR = Path(__file__).resolve().parent.parent / "bundled"
# Common names of bundled symbols, offered as suggestions (never substituted silently).
_ALIASES = {
    "SPX": "^GSPC",
    "GSPC": "^GSPC",
    "SP500": "^GSPC",
    "VIX": "^VIX",
    "IXIC": "^IXIC",
    "COMP": "^IXIC",
    "NASDAQ": "^IXIC",
    "META": "FB",
    "GOOGL": "GOOG",
    "BTC": "BTC-USD",
}


_FILED_KEPT = 32  # (symbol, instant) cuts of the company facts kept


class _Store:
    """The manifest and the loaded bars of one bundled folder, shared by its providers."""

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _stores: ClassVar[dict[Path, _Store]] = {}

    def __init__(self, root: Path) -> None:
        self.root = root
        manifest_path = root / "manifest.json"
        if not manifest_path.is_file():
            raise ProviderUnavailable(
                f"bundled data not found at {root}; reinstall alphadesk or rebuild it with "
                "`python scripts/build_bundled_data.py`",
                provider="bundled",
            )
        manifest = json.loads(manifest_path.read_text())
        self.entries: dict[str, dict[str, Any]] = {e["symbol"]: e for e in manifest["bars"]}
        self.rates: dict[str, Any] = manifest.get("rates", {})
        # Format 2 stores prices as traded, with the splits in the action table.
        self.actions: ActionTable | None = None
        if manifest.get("format", 1) >= 2:
            self.actions = ActionTable.read(root / manifest["actions"]["file"])
        self.news: dict[str, Any] = manifest.get("news", {})
        self.statements: dict[str, Any] = manifest.get("statements", {})
        self._facts: dict[str, list[Fact]] | None = None
        self._bars: dict[str, Bars] = {}
        self._news: dict[str, list[NewsItem]] | None = None

    @classmethod
    def at(cls, root: Path) -> _Store:
        with cls._lock:
            if root not in cls._stores:
                cls._stores[root] = cls(root)
            return cls._stores[root]

    def bars(self, symbol: str, retrieved_at: datetime) -> Bars:
        with self._lock:
            cached = self._bars.get(symbol)
            if cached is None:
                cached = self._read(symbol, retrieved_at)
                self._bars[symbol] = cached
            return cached

    def _read(self, symbol: str, retrieved_at: datetime) -> Bars:
        import pandas as pd

        entry = self.entries[symbol]
        frame = pd.read_parquet(self._checked(entry))
        return Bars.create(symbol, "1d", frame, _provenance(entry, retrieved_at))

    def _checked(self, entry: dict[str, Any]) -> Any:
        import io

        path = self.root / entry["file"]
        raw = path.read_bytes()
        if hashlib.sha256(raw).hexdigest() != entry["sha256"]:
            raise ProviderUnavailable(
                f"bundled file {path.name} does not match its manifest checksum; reinstall "
                "alphadesk or rebuild with `python scripts/build_bundled_data.py`",
                provider="bundled",
            )
        return io.BytesIO(raw)

    def news_items(self, symbol: str) -> list[NewsItem]:
        """Every bundled news item of ``symbol``, oldest first (read once per process)."""
        with self._lock:
            if self._news is None:
                self._news = self._read_news() if self.news else {}
            return self._news.get(symbol, [])

    def statement_facts(self, symbol: str) -> list[Fact]:
        """Polygon's statement figures of ``symbol`` (companies the SEC archive lacks)."""
        with self._lock:
            if self._facts is None:
                self._facts = self._read_facts() if self.statements else {}
            return self._facts.get(symbol, [])

    def _read_facts(self) -> dict[str, list[Fact]]:
        import pandas as pd

        frame = pd.read_parquet(self._checked(self.statements))
        frame = frame.astype(object).where(frame.notna(), None)
        out: dict[str, list[Fact]] = {}
        for row in frame.itertuples(index=False):
            out.setdefault(row.symbol, []).append(
                Fact(
                    known_at=row.known_at.to_pydatetime(),
                    taxonomy=row.taxonomy,
                    concept=row.concept,
                    unit=row.unit,
                    value=float(row.value),
                    start=date.fromisoformat(row.start) if row.start else None,
                    end=date.fromisoformat(row.end),
                    filed=date.fromisoformat(row.filed),
                    form=row.form,
                    fiscal_year=None if row.fy is None else int(row.fy),
                    fiscal_period=row.fp,
                    accession_number=row.accn,
                )
            )
        return out

    def _read_news(self) -> dict[str, list[NewsItem]]:
        import pandas as pd

        frame = pd.read_parquet(self._checked(self.news))
        frame = frame.astype(object).where(frame.notna(), None)
        out: dict[str, list[NewsItem]] = {}
        for row in frame.itertuples(index=False):
            out.setdefault(row.symbol, []).append(
                NewsItem(
                    known_at=row.published_at.to_pydatetime(),
                    title=row.title,
                    publisher=row.publisher,
                    url=row.url,
                    summary=row.summary,
                    tickers=[row.symbol],
                )
            )
        return out


def _provenance(entry: dict[str, Any], retrieved_at: datetime) -> Provenance:
    src = entry["source"]
    return Provenance(
        provider="bundled",
        origin="observed",
        retrieved_at=retrieved_at,
        source=f"{src['package']} {src['version']}: {src['dataset']} ({src['origin']})",
        notes=[*entry.get("notes", []), *_dividend_note(entry)],
    )


def _holes(ranges: list[list[str]], first: date, last: date) -> list[str]:
    """The gaps between consecutive ``ranges`` that fall inside ``first``..``last``."""
    out = []
    for (_, end), (start, _) in itertools.pairwise(ranges):
        after, before = date.fromisoformat(end), date.fromisoformat(start)
        if first <= after and before <= last:
            out.append(f"after {after.isoformat()} until {before.isoformat()}")
    return out


def _news_span(span: dict[str, Any] | None) -> str | None:
    return None if span is None else f"{span['first']}..{span['last']} ({span['items']} items)"


def _dividend_note(entry: dict[str, Any]) -> list[str]:
    dividends = entry.get("prices", {}).get("dividends", "")
    return [f"dividends: {dividends}"] if dividends.startswith("not available") else []


class BundledProvider(Provider):
    """Daily bars, last-close quotes and identities of the bundled universe, and SEC
    company facts, filings and earnings releases of the bundled EDGAR archive.

    Args:
        root: Folder holding ``manifest.json`` (default: the data shipped in the package).
        clock: Returns "now", for ``retrieved_at``.
    """

    name = "bundled"
    kinds = frozenset(
        {
            DataKind.DAILY_BARS,
            DataKind.QUOTE,
            DataKind.INSTRUMENT,
            DataKind.FUNDAMENTALS,
            DataKind.FILINGS,
            DataKind.EARNINGS,
            DataKind.NEWS,
            DataKind.DIVIDENDS,
        }
    )

    def __init__(self, root: Path | None = None, *, clock: Clock = utc_now) -> None:
        super().__init__(clock=clock)
        self._root = (root or BUNDLED_DIR).resolve()
        self._filed: OrderedDict[tuple[str, datetime], Fundamentals] = OrderedDict()
        self._filed_lock = threading.Lock()

    def fundamentals(self, symbol: str, as_of: datetime) -> Fundamentals:
        """Facts filed by ``as_of``: the files never change, so the analyst and the check of
        its report (asking for the same instant) share one point-in-time cut, a few ms."""
        key = (symbol, as_of)
        with self._filed_lock:
            found = self._filed.get(key)
        if found is None:
            found = super().fundamentals(symbol, as_of)
            with self._filed_lock:
                self._filed[key] = found
                while len(self._filed) > _FILED_KEPT:
                    self._filed.popitem(last=False)
        return found

    @property
    def _store(self) -> _Store:
        return _Store.at(self._root)

    def universe(self) -> list[str]:
        return sorted(self._store.entries)

    def unknown_symbol(self, symbol: str, what: str = "data") -> NoData:
        error = super().unknown_symbol(symbol, what)
        alias = _ALIASES.get(symbol)
        if alias and error.suggestions[:1] != [alias]:
            error = NoData(
                f"{self.name} has no {what} for {symbol}; did you mean {alias}? "
                "(see `alphadesk data list`)",
                provider=self.name,
                suggestions=[alias, *(s for s in error.suggestions if s != alias)],
            )
        return error

    def coverage(self) -> list[Coverage]:
        sec = SecBundle.at()
        rows = []
        years = self._store.statements.get("years", {})
        for row in self._bar_coverage():
            fundamentals, earnings = sec.coverage(row.symbol)
            fundamentals = fundamentals or years.get(row.symbol)
            rows.append(row.model_copy(update={"fundamentals": fundamentals, "earnings": earnings}))
        rows += [
            Coverage(
                symbol=symbol,
                provider=self.name,
                name=company["name"],
                asset_type="equity",
                fields=[],
                start=None,
                end=None,
                fundamentals=sec.coverage(symbol)[0],
                earnings=sec.coverage(symbol)[1],
                source=f"{company['source']['package']} {company['source']['version']}",
            )
            for symbol, company in sorted(sec.companies.items())
            if symbol not in self._store.entries
        ]
        return sorted(rows, key=lambda c: c.symbol)

    def _bar_coverage(self) -> list[Coverage]:
        news = self._store.news.get("symbols", {})
        return [
            Coverage(
                symbol=e["symbol"],
                provider=self.name,
                name=e["name"],
                asset_type=e["asset_type"],
                fields=list(e["fields"]),
                start=date.fromisoformat(e["start"]),
                end=date.fromisoformat(e["end"]),
                rows=e["rows"],
                ranges=[
                    (date.fromisoformat(a), date.fromisoformat(b)) for a, b in e.get("ranges", [])
                ],
                news=_news_span(news.get(e["symbol"])),
                source=f"{e['source']['package']} {e['source']['version']}",
            )
            for e in sorted(self._store.entries.values(), key=lambda e: e["symbol"])
        ]

    def _news(self, symbol: str, as_of: datetime) -> News:
        covered = self._store.news.get("symbols", {})
        if symbol not in covered:
            raise NoData(
                f"bundled has no news for {symbol} (bundled news covers "
                f"{', '.join(sorted(covered)) or 'no symbol'}); add news/{symbol}.jsonl to "
                "a `local` folder, or yahoo (online) to data.providers "
                "(ALPHADESK_DATA__PROVIDERS)",
                provider=self.name,
            )
        source = self._store.news["source"]
        span = covered[symbol]
        provenance = Provenance(
            provider="bundled",
            origin="observed",
            retrieved_at=self._clock(),
            source=f"{source['package']} {source['version']}: {source['dataset']} "
            f"({source['origin']})",
            notes=[
                f"bundled news of {symbol}: {span['items']} items published "
                f"{span['first']}..{span['last']} (UTC); none outside those dates",
            ],
        )
        return News(symbol=symbol, items=self._store.news_items(symbol), provenance=provenance)

    def daily_bars(self, symbol: str, as_of: datetime, *, start: date | None = None) -> Bars:
        """Daily bars as the base class serves them; a window across a hole in the data
        (sessions the sources lack) says so in its provenance notes."""
        bars = super().daily_bars(symbol, as_of, start=start)
        entry = self._store.entries.get(bars.symbol)
        first, last = bars.first_time, bars.last_time
        if entry is None or first is None or last is None:
            return bars
        holes = _holes(entry.get("ranges", []), first.date(), last.date())
        if not holes:
            return bars
        note = "no bars at the source " + "; ".join(holes) + " (a hole, not filled)"
        provenance = bars.provenance.model_copy(update={"notes": [*bars.provenance.notes, note]})
        return replace(bars, provenance=provenance)

    def _entry(self, symbol: str, what: str) -> dict[str, Any]:
        entry = self._store.entries.get(symbol)
        if entry is None:
            raise self.unknown_symbol(symbol, what)
        return entry

    def _daily_bars(self, symbol: str, as_of: datetime) -> Bars:
        self._entry(symbol, "daily bars")
        return self._store.bars(symbol, self._clock())

    def _dividends(self, symbol: str, as_of: datetime) -> Dividends:
        """The cash dividends of ``symbol`` (per share as traded on each ex-date); the
        public method keeps those declared by ``as_of``."""
        actions = self._store.actions
        records = [] if actions is None else actions.dividends(symbol)
        if not records:
            raise NoData(
                f"bundled has no dividend records for {symbol}; list them in the local "
                "folder's actions.csv (kind dividend) to have them credited",
                provider=self.name,
            )
        provenance = Provenance(
            provider=self.name,
            origin="observed",
            retrieved_at=self._clock(),
            source=records[0].source or "bundled actions.csv",
            notes=["each dividend known from its declaration day"],
        )
        splits = actions.splits(symbol) if actions is not None else []
        return dividend_timeline(symbol, records, splits, as_of, provenance)

    def _splits(self, symbol: str) -> list[Split] | None:
        actions = self._store.actions
        return None if actions is None else actions.splits(symbol)

    def _quote(self, symbol: str, as_of: datetime) -> Quote:
        bars = self._daily_bars(symbol, as_of).upto(as_of)
        if len(bars) == 0:
            raise NoData(
                f"{symbol}: no bundled close before {as_of.isoformat()}; the data starts "
                f"{self._entry(symbol, 'quotes')['start']}",
                provider=self.name,
            )
        field = bars.price_field()
        last = bars.frame.iloc[-1]
        volume = float(last["volume"]) if "volume" in bars.fields else None
        return Quote(
            symbol=symbol,
            observed_at=bars.frame.index[-1].to_pydatetime(),
            provenance=bars.provenance,
            price=float(last[field]),
            volume=volume,
            basis="close" if field == "close" else "adj_close",
        )

    def _fundamentals(self, symbol: str, as_of: datetime) -> Fundamentals:
        # The statements fill in for companies the SEC archive lacks: read only for those.
        in_sec = symbol in SecBundle.at().companies
        facts = [] if in_sec else self._store.statement_facts(symbol)
        if facts:
            source = self._store.statements["source"]
            return Fundamentals(
                symbol=symbol,
                items=facts,
                provenance=Provenance(
                    provider="bundled",
                    origin="observed",
                    retrieved_at=self._clock(),
                    source=f"{source['origin']} ({source['dataset']})",
                    notes=["each figure known from its filing's EDGAR acceptance"],
                ),
            )
        self._sec_company(symbol, "SEC company facts")
        return SecBundle.at().fundamentals(symbol, self._clock())

    def _filings(self, symbol: str, as_of: datetime) -> Filings:
        self._sec_company(symbol, "SEC filings")
        return SecBundle.at().filings(symbol, self._clock())

    def _earnings(self, symbol: str, as_of: datetime) -> Earnings:
        self._sec_company(symbol, "earnings releases")
        return SecBundle.at().earnings(symbol, self._clock())

    def _sec_company(self, symbol: str, what: str) -> None:
        companies = SecBundle.at().companies
        if symbol not in companies:
            matches = [s for s in close_matches(symbol, list(companies)) if s != symbol]
            hint = f"; did you mean {', '.join(matches)}?" if matches else ""
            raise NoData(
                f"bundled has no {what} for {symbol}{hint} (bundled SEC companies: "
                f"{', '.join(sorted(companies))})",
                provider=self.name,
                suggestions=matches,
            )

    def _instrument(self, symbol: str, as_of: datetime) -> Instrument:
        entry = self._entry(symbol, "identity")
        first = self._store.bars(symbol, self._clock()).first_time
        assert first is not None  # a bundled file always has rows
        return Instrument(
            symbol=symbol,
            observed_at=first,  # the identity recorded is that of the data period
            provenance=_provenance(entry, self._clock()),
            name=entry["name"],
            asset_type=entry["asset_type"],
            exchange=entry.get("exchange"),
            sector=entry.get("sector"),
        )

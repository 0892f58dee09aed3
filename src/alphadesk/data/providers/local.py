"""The ``local`` provider: a folder of the user's own files.

Layout (file names are canonical symbols, e.g. ``AAPL``, ``^GSPC``, ``BRK-B``)::

    <local_dir>/
      bars/1d/<SYMBOL>.csv | .parquet     daily bars
      bars/<interval>/<SYMBOL>.csv | ...  intraday bars: 1m 2m 5m 15m 30m 60m 90m 1h
      news/<SYMBOL>.jsonl                 one JSON object per line
      fundamentals/<SYMBOL>.csv           one reported value per row, or
      fundamentals/<SYMBOL>.json          EDGAR company facts (CIK##########.json renamed)
      filings/<SYMBOL>.json               EDGAR submissions: acceptance times of the filings
      instruments.csv                     symbol,name,asset_type,exchange,sector,...
      actions.csv                         symbol,ex_date,kind,ratio[,source]: splits

Daily bars: a ``date`` column (the New York trading date; stamped at its XNYS session
close) or a tz-aware ``close_time``, and any of ``open, high, low, close, adj_close,
volume`` (``Adj Close`` and other capitalisations accepted). Absent fields stay missing.
Intraday bars: a tz-aware ``close_time`` (bar end) or ``start`` (bar start).
Daily bars of a symbol with splits in ``actions.csv`` (the bundled table's format) are read
as traded and served on the ``as_of`` basis, as the bundled ones are; other symbols' bars
are served as the file has them, and their basis says so.
News lines: ``published_at`` (tz-aware ISO 8601) and ``title``; optional ``publisher``,
``url``, ``summary``, ``tickers``. Fundamentals: ``concept, value, unit, end, filed`` and
optional ``start, form, fiscal_year, fiscal_period, taxonomy, accession_number``; a value
becomes known at the end of its ``filed`` day (New York). A company-facts JSON file is read
by the ``sec`` provider's parser: a value is known from its filing's acceptance time when
``filings/<SYMBOL>.json`` lists the filing, else from the next session's open after its
``filed`` date. A file that is not company facts is an error naming it (a provider chain
then skips to the next provider); broken values inside one are left out and named in the
result's notes.

Files are read once and re-read when they change on disk.
"""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from ..actions import ActionTable, Split, dividend_timeline
from ..bars import BAR_FIELDS, Bars
from ..base import Clock, DataKind, Provider, utc_now
from ..calendar import bar_close_instants, end_of_day
from ..errors import InvalidData, NoData, NotConfigured, SkippedFile
from ..models import Dividends, Fact, Fundamentals, Instrument, News, NewsItem, Provenance, Quote

__all__ = ["LocalProvider"]

_SUFFIXES = (".parquet", ".csv")
_INTERVAL_MINUTES = {
    "1m": 1,
    "2m": 2,
    "5m": 5,
    "15m": 15,
    "30m": 30,
    "60m": 60,
    "90m": 90,
    "1h": 60,
}
_ALIASES = {"adj close": "adj_close", "adjclose": "adj_close", "adjusted_close": "adj_close"}
_FACT_COLUMNS = ("concept", "value", "unit", "end", "filed")
_ACTIONS = "actions.csv"
# Which provider serves a kind the folder lacks, by the folder's top directory.
_ELSEWHERE = {
    "bars": "yahoo (online)",
    "news": "yahoo (online)",
    "fundamentals": "sec (it needs data.sec_user_agent) or bundled (SEC facts of 22 companies)",
}
# Identities in instruments.csv hold at every as_of: they carry no date.
_REFERENCE_TIME = datetime(1900, 1, 1, tzinfo=UTC)


class LocalProvider(Provider):
    """Bars, news, fundamentals and identities from a folder (layout in the module doc).

    Args:
        root: The folder; ``None`` raises NotConfigured on use, naming the setting.
        clock: Returns "now", for ``retrieved_at``.
    """

    name = "local"
    kinds = frozenset(
        {
            DataKind.DAILY_BARS,
            DataKind.INTRADAY_BARS,
            DataKind.QUOTE,
            DataKind.NEWS,
            DataKind.FUNDAMENTALS,
            DataKind.INSTRUMENT,
            DataKind.DIVIDENDS,
        }
    )

    def __init__(self, root: Path | None, *, clock: Clock = utc_now) -> None:
        super().__init__(clock=clock)
        self._root = Path(root).expanduser() if root is not None else None
        self._loaded: dict[Path, tuple[float, int, Any]] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LocalProvider({str(self._root)!r})"

    @property
    def root(self) -> Path:
        """The folder, or NotConfigured when none is set or it does not exist."""
        if self._root is None:
            raise NotConfigured(
                "the local provider has no folder; set data.local_dir in the settings "
                "(ALPHADESK_DATA__LOCAL_DIR=/path/to/folder)",
                provider=self.name,
            )
        if not self._root.is_dir():
            raise NotConfigured(
                f"the local data folder {self._root} does not exist; create it or fix "
                "data.local_dir (ALPHADESK_DATA__LOCAL_DIR)",
                provider=self.name,
            )
        return self._root

    def universe(self) -> list[str]:
        try:
            folder = self.root / "bars" / "1d"
        except NotConfigured:
            return []
        if not folder.is_dir():
            return []
        return sorted({p.stem for p in folder.iterdir() if p.suffix in _SUFFIXES})

    def _find(self, folder: Path, symbol: str, suffixes: tuple[str, ...], what: str) -> Path:
        for suffix in suffixes:
            path = folder / f"{symbol}{suffix}"
            if path.is_file():
                return path
        if symbol not in self.universe():
            raise self.unknown_symbol(symbol, what)
        # A symbol with daily bars is no typo: only this kind of file is missing.
        files = " or ".join(f"{folder.relative_to(self.root)}/{symbol}{s}" for s in suffixes)
        source = _ELSEWHERE[folder.relative_to(self.root).parts[0]]
        raise NoData(
            f"the local folder has daily bars of {symbol} but no {what}: add {files} to "
            f"it (data.local_dir), or add {source} to `data.providers`",
            provider=self.name,
        )

    def _cached(self, path: Path, read: Any) -> Any:
        stat = path.stat()
        with self._lock:
            hit = self._loaded.get(path)
            if hit and hit[0] == stat.st_mtime and hit[1] == stat.st_size:
                return hit[2]
        value = read(path)
        with self._lock:
            self._loaded[path] = (stat.st_mtime, stat.st_size, value)
        return value

    def _provenance(self, path: Path) -> Provenance:
        return Provenance(
            provider=self.name, origin="observed", retrieved_at=self._clock(), source=str(path)
        )

    def _daily_bars(self, symbol: str, as_of: datetime) -> Bars:
        path = self._find(self.root / "bars" / "1d", symbol, _SUFFIXES, "daily bars")
        frame = self._cached(path, lambda p: _read_bars(p, None))
        bars = Bars.create(symbol, "1d", frame, self._provenance(path))
        if self._splits(symbol) is not None:
            return bars  # put on the as_of basis by the caller, which states it
        basis = (
            f"as in {path.name}: no splits applied (list {symbol}'s splits in "
            f"{self.root / _ACTIONS} to read it as traded)"
        )
        return replace(bars, basis=basis)

    def _actions(self) -> ActionTable | None:
        """``actions.csv`` when the folder has one.

        Raises:
            SkippedFile: A malformed ``actions.csv`` (the message names the file and line).
        """
        path = self.root / _ACTIONS
        if not path.is_file():
            return None
        try:
            table: ActionTable = self._cached(path, ActionTable.read)
        except (OSError, ValueError) as exc:
            # Splits or dividends unreadable: its bars cannot be put as traded, so they are
            # skipped (named) and a chain answers from its next provider.
            raise SkippedFile(f"{exc} (file skipped)", provider=self.name) from None
        return table

    def _splits(self, symbol: str) -> list[Split] | None:
        """The symbol's splits when ``actions.csv`` lists any: its bars are then as traded.

        Raises:
            SkippedFile: A malformed ``actions.csv`` (the message names the file and line).
        """
        table = self._actions()
        return None if table is None else table.splits(symbol) or None

    def _dividends(self, symbol: str, as_of: datetime) -> Dividends:
        table = self._actions()
        records = [] if table is None else table.dividends(symbol)
        if not records:
            raise NoData(
                f"{self.root / _ACTIONS} lists no dividends of {symbol} (add rows: "
                "symbol,ex_date,kind=dividend,amount[,declared,pay_date])",
                provider=self.name,
            )
        assert table is not None
        provenance = self._provenance(self.root / _ACTIONS)
        return dividend_timeline(symbol, records, table.splits(symbol), as_of, provenance)

    def _intraday_bars(self, symbol: str, as_of: datetime, interval: str) -> Bars:
        folder = self.root / "bars" / interval
        path = self._find(folder, symbol, _SUFFIXES, f"{interval} bars")
        frame = self._cached(path, lambda p: _read_bars(p, interval))
        return Bars.create(symbol, interval, frame, self._provenance(path))

    def _quote(self, symbol: str, as_of: datetime) -> Quote:
        bars = self._daily_bars(symbol, as_of).upto(as_of)
        if len(bars) == 0:
            raise NoData(
                f"{symbol}: no local daily bar before {as_of.isoformat()}", provider=self.name
            )
        field = bars.price_field()
        last = bars.frame.iloc[-1]
        return Quote(
            symbol=symbol,
            observed_at=bars.frame.index[-1].to_pydatetime(),
            provenance=bars.provenance,
            price=float(last[field]),
            volume=float(last["volume"]) if "volume" in bars.fields else None,
            basis="close" if field == "close" else "adj_close",
        )

    def _news(self, symbol: str, as_of: datetime) -> News:
        path = self._find(self.root / "news", symbol, (".jsonl",), "news")
        items = self._cached(path, _read_news)
        return News(symbol=symbol, items=items, provenance=self._provenance(path))

    def _fundamentals(self, symbol: str, as_of: datetime) -> Fundamentals:
        path = self._find(self.root / "fundamentals", symbol, (".csv", ".json"), "fundamentals")
        if path.suffix == ".csv":
            facts = self._cached(path, _read_facts)
            return Fundamentals(symbol=symbol, items=facts, provenance=self._provenance(path))
        submissions = self.root / "filings" / f"{symbol}.json"
        accepted = self._cached(submissions, _read_acceptance) if submissions.is_file() else {}
        facts, skipped = self._cached(path, lambda p: _read_company_facts(p, accepted))
        provenance = self._provenance(path)
        if skipped:
            note = f"{path}: left out {len(skipped)} broken value(s), e.g. {skipped[0]}"
            provenance = provenance.model_copy(update={"notes": [note]})
        return Fundamentals(symbol=symbol, items=facts, provenance=provenance)

    def _instrument(self, symbol: str, as_of: datetime) -> Instrument:
        path = self.root / "instruments.csv"
        if not path.is_file():
            raise NoData(
                f"no {path}; add one with columns symbol,name,asset_type,...", provider=self.name
            )
        rows = self._cached(path, _read_instruments)
        if symbol not in rows:
            raise NoData(f"{symbol} is not in {path}", provider=self.name)
        try:
            return Instrument(
                symbol=symbol,
                observed_at=_REFERENCE_TIME,
                provenance=self._provenance(path),
                **rows[symbol],
            )
        except ValueError as exc:
            raise InvalidData(f"{path}, symbol {symbol}: {exc}", provider=self.name) from exc


def _read_table(path: Path) -> Any:
    import pandas as pd

    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise InvalidData(f"cannot read {path}: {exc}", provider="local") from exc


def _read_bars(path: Path, interval: str | None) -> Any:
    import pandas as pd

    frame = _read_table(path)
    frame.columns = [
        _ALIASES.get(str(c).strip().lower(), str(c).strip().lower()) for c in frame.columns
    ]
    frame = frame.reset_index(drop="close_time" not in (frame.index.names or []))
    if "close_time" in frame.columns:
        index = pd.DatetimeIndex(pd.to_datetime(frame["close_time"], utc=False))
    elif interval is None and "date" in frame.columns:
        dates = pd.DatetimeIndex(pd.to_datetime(frame["date"]))
        if dates.tz is not None:
            raise InvalidData(f"{path}: `date` must be a plain date (YYYY-MM-DD)", provider="local")
        index = bar_close_instants(dates)
    elif interval is not None and "start" in frame.columns:
        starts = pd.DatetimeIndex(pd.to_datetime(frame["start"]))
        index = starts + pd.Timedelta(minutes=_INTERVAL_MINUTES[interval])
    else:
        need = "`date` or `close_time`" if interval is None else "`close_time` or `start`"
        raise InvalidData(f"{path}: needs a {need} column", provider="local")
    if index.tz is None:
        raise InvalidData(
            f"{path}: timestamps need a zone offset (e.g. 2024-01-02T15:35:00-05:00)",
            provider="local",
        )
    fields = [c for c in BAR_FIELDS if c in frame.columns]
    if not fields:
        raise InvalidData(f"{path}: no bar column among {', '.join(BAR_FIELDS)}", provider="local")
    data = frame[fields].apply(pd.to_numeric, errors="coerce")
    data.index = index
    return data.sort_index()


def _read_news(path: Path) -> list[NewsItem]:
    items = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            items.append(
                NewsItem(
                    known_at=raw["published_at"],
                    title=raw["title"],
                    publisher=raw.get("publisher"),
                    url=raw.get("url"),
                    summary=raw.get("summary"),
                    tickers=list(raw.get("tickers", [])),
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            # Skipped, named: a chain answers from its next provider (a truncated download
            # is no reason to stop a run).
            raise SkippedFile(
                f"{path}, line {number}: {exc}; each line needs published_at (with a zone) "
                "and title (file skipped)",
                provider="local",
            ) from exc
    return items


def _read_facts(path: Path) -> list[Fact]:
    import pandas as pd

    frame = _read_table(path)
    missing = [c for c in _FACT_COLUMNS if c not in frame.columns]
    if missing:
        raise InvalidData(f"{path}: missing column(s) {', '.join(missing)}", provider="local")
    facts = []
    for number, row in enumerate(frame.to_dict("records"), start=2):
        try:
            filed = date.fromisoformat(str(row["filed"]))
            optional = {
                k: row[k]
                for k in ("form", "fiscal_period", "taxonomy", "accession_number")
                if k in row and pd.notna(row[k])
            }
            facts.append(
                Fact(
                    known_at=end_of_day(filed),
                    concept=str(row["concept"]),
                    unit=str(row["unit"]),
                    value=float(row["value"]),
                    start=date.fromisoformat(str(row["start"]))
                    if pd.notna(row.get("start"))
                    else None,
                    end=date.fromisoformat(str(row["end"])),
                    filed=filed,
                    fiscal_year=int(row["fiscal_year"])
                    if pd.notna(row.get("fiscal_year"))
                    else None,
                    **optional,
                )
            )
        except (ValueError, TypeError) as exc:
            raise InvalidData(f"{path}, row {number}: {exc}", provider="local") from exc
    return facts


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SkippedFile(
            f"{path} is not readable JSON ({exc}); file skipped. Download it again from "
            "EDGAR (data.sec.gov/api/xbrl/companyfacts/CIK##########.json)",
            provider="local",
        ) from exc


def _read_company_facts(path: Path, accepted: dict[str, datetime]) -> tuple[list[Fact], list[str]]:
    from ..errors import MalformedResponse
    from . import _sec_parse

    skipped: list[str] = []
    try:
        facts = _sec_parse.facts(_read_json(path), accepted, skipped=skipped)
    except MalformedResponse as exc:
        raise SkippedFile(
            f"{path}: not EDGAR company facts ({exc}); file skipped", provider="local"
        ) from exc
    if not facts:
        raise SkippedFile(f"{path}: no readable fact in the file; file skipped", provider="local")
    return facts, skipped


def _read_acceptance(path: Path) -> dict[str, datetime]:
    """Accession number -> acceptance time from an EDGAR submissions file."""
    from ..errors import MalformedResponse
    from . import _sec_parse

    raw = _read_json(path)
    try:
        arrays = raw["filings"]["recent"] if isinstance(raw, dict) and "filings" in raw else raw
        cik = int(raw.get("cik", 0)) if isinstance(raw, dict) else 0
        filings = _sec_parse.filings(arrays, cik, "https://www.sec.gov")
    except (MalformedResponse, TypeError, KeyError, ValueError) as exc:
        raise SkippedFile(
            f"{path}: not an EDGAR submissions file ({exc})", provider="local"
        ) from exc
    return {f.accession_number: f.known_at for f in filings}


def _read_instruments(path: Path) -> dict[str, dict[str, Any]]:
    import pandas as pd

    from ..symbols import normalize_symbol

    frame = _read_table(path)
    if not {"symbol", "name", "asset_type"} <= set(frame.columns):
        raise InvalidData(f"{path}: needs columns symbol, name, asset_type", provider="local")
    rows: dict[str, dict[str, Any]] = {}
    for row in frame.to_dict("records"):
        fields = {
            k: row[k]
            for k in ("name", "asset_type", "exchange", "sector", "industry", "currency")
            if k in row and pd.notna(row[k])
        }
        rows[normalize_symbol(row["symbol"])] = fields
    return rows

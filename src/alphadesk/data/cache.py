"""A SQLite cache of provider answers (``<data_dir>/market_cache.sqlite``).

An entry is what a source returned at ``fetched_at``. Two rules decide whether it answers
a question about ``as_of``:

* **History is immutable.** If ``as_of <= fetched_at``, everything known at ``as_of`` was
  already in the entry: it answers, forever.
* **Live data has a time to live.** If ``as_of`` is later than the fetch, the entry
  answers only while it is younger than its TTL; then the source is asked again.

The cache stores the whole answer; the point-in-time filter runs after it, in the
provider's public method, so a cached answer can never leak what ``as_of`` did not know.
Payloads are JSON (Pydantic models) or Parquet (bars): nothing is unpickled.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from alphadesk.store import sqlite

from .bars import Bars
from .models import (
    AnalystRatings,
    Earnings,
    Filings,
    Fundamentals,
    Instrument,
    News,
    OptionChain,
    Provenance,
    Quote,
    ShortInterest,
)
from .pit import require_aware

__all__ = ["CACHE_FILE", "TTL", "DataCache", "cache_key"]

log = logging.getLogger(__name__)

CACHE_FILE = "market_cache.sqlite"
# How long an entry may answer a question about a later instant than its fetch.
TTL: dict[str, timedelta] = {
    "daily_bars": timedelta(minutes=15),
    "intraday_bars": timedelta(minutes=1),
    "quote": timedelta(seconds=30),
    "option_chain": timedelta(minutes=2),
    "instrument": timedelta(days=1),
    "fundamentals": timedelta(hours=6),
    "news": timedelta(minutes=10),
    "earnings": timedelta(hours=6),
    "short_interest": timedelta(hours=6),
    "analyst_ratings": timedelta(hours=1),
    "filings": timedelta(minutes=30),
    "sec_document": timedelta(minutes=30),
}
_MODELS: dict[str, type[BaseModel]] = {
    cls.__name__: cls
    for cls in (
        AnalystRatings,
        Earnings,
        Filings,
        Fundamentals,
        Instrument,
        News,
        OptionChain,
        Quote,
        ShortInterest,
    )
}
_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    key TEXT PRIMARY KEY,
    fetched_at TEXT NOT NULL,
    type TEXT NOT NULL,
    meta TEXT NOT NULL,
    body BLOB NOT NULL
)
"""

T = TypeVar("T")


class DataCache:
    """Provider answers in one SQLite file. A file found corrupt when first opened is moved
    aside (timestamp suffix) and an empty cache started, with a warning in the log.

    Args:
        path: The SQLite file (created with its folder on first use).
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._ready = False

    def __repr__(self) -> str:
        return f"DataCache({str(self.path)!r})"

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection in a transaction, closed afterwards (callers hold the lock)."""
        if not self._ready:
            sqlite.create(self.path, _SCHEMA, rebuild_if_corrupt=True)
            self._ready = True
        con = sqlite.connect(self.path)
        try:
            with con:
                yield con
        finally:
            con.close()

    def get(self, key: str, as_of: datetime, ttl: timedelta, now: datetime) -> Any | None:
        """The cached answer for ``key`` if it may answer ``as_of``, else None."""
        as_of = require_aware(as_of)
        with self._lock, self._connect() as con:
            row = con.execute(
                "SELECT fetched_at, type, meta, body FROM entries WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        fetched_at = datetime.fromisoformat(row[0])
        if as_of > fetched_at and now - fetched_at > ttl:
            return None
        try:
            return _decode(row[1], row[2], row[3])
        except (ValueError, KeyError) as exc:  # a corrupt or outdated entry: refetch
            log.warning("dropping unreadable cache entry %s: %s", key, exc)
            return None

    def put(self, key: str, value: Any, fetched_at: datetime) -> None:
        """Store ``value`` (Bars or a result model) as fetched at ``fetched_at``."""
        kind, meta, body = _encode(value)
        with self._lock, self._connect() as con:
            con.execute(
                "INSERT OR REPLACE INTO entries (key, fetched_at, type, meta, body) "
                "VALUES (?, ?, ?, ?, ?)",
                (key, require_aware(fetched_at, "fetched_at").isoformat(), kind, meta, body),
            )

    def get_or_fetch(
        self,
        key: str,
        as_of: datetime,
        ttl: timedelta,
        fetch: Callable[[], T],
        now: Callable[[], datetime],
    ) -> T:
        """The cached answer when it may answer ``as_of``; else ``fetch()``, stored."""
        moment = now()
        cached = self.get(key, as_of, ttl, moment)
        if cached is not None:
            return cached
        value = fetch()
        self.put(key, value, moment)
        return value

    def clear(self) -> int:
        """Delete every entry; return how many there were."""
        with self._lock, self._connect() as con:
            count = con.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
            con.execute("DELETE FROM entries")
        return int(count)


def cache_key(provider: str, kind: str, symbol: str, **params: object) -> str:
    """A stable key: provider, kind, symbol and the parameters that change the answer."""
    extra = json.dumps(params, sort_keys=True, default=str) if params else ""
    return f"{provider}|{kind}|{symbol}|{extra}"


def _encode(value: Any) -> tuple[str, str, bytes]:
    if isinstance(value, Bars):
        buffer = io.BytesIO()
        value.frame.to_parquet(buffer, index=True)
        meta = {
            "symbol": value.symbol,
            "interval": value.interval,
            "provenance": value.provenance.model_dump(mode="json"),
        }
        return "Bars", json.dumps(meta), buffer.getvalue()
    name = type(value).__name__
    if name not in _MODELS or not isinstance(value, BaseModel):
        raise TypeError(f"cannot cache a {name}")
    return name, "{}", value.model_dump_json().encode()


def _decode(kind: str, meta: str, body: bytes) -> Any:
    if kind == "Bars":
        import pandas as pd

        info = json.loads(meta)
        frame = pd.read_parquet(io.BytesIO(body))
        provenance = Provenance.model_validate(info["provenance"])
        return Bars.create(info["symbol"], info["interval"], frame, provenance)
    return _MODELS[kind].model_validate_json(body)

"""The StockBench snapshot: 2025 bars, news and dividends of the 20 Dow stocks and SPY.

Used by ``build_bundled_data.py``. The source is the public repository
``ChenYXxxx/stockbench`` (Apache-2.0), read at the pinned commit :data:`COMMIT` with
``git archive`` from a local clone, so the same clone gives the same bytes. Its
``storage/`` folder holds one Parquet file of OHLCV + VWAP per symbol and day (Polygon
aggregates), company news by day (Finnhub, a few Polygon items) and Polygon's dividend
and split records.

Finnhub's ``published_utc`` in the snapshot is the epoch ``datetime`` written in UTC+8
(the benchmark was collected there) and labelled UTC: every such item carries both and
they differ by exactly eight hours. The instant kept is the epoch's, checked item by item;
the snapshot's day file (what the benchmark reads) is kept as ``source_day``.
"""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pandas as pd

__all__ = [
    "COMMIT",
    "DOW20",
    "LICENCE",
    "ORIGIN",
    "REPOSITORY",
    "Snapshot",
    "adjusted_close",
    "read_snapshot",
]

REPOSITORY = "https://github.com/ChenYXxxx/stockbench"
COMMIT = "f5a11b3e7e89095be039adc6dee0b09d5b55d732"
LICENCE = "Apache-2.0 (StockBench repository licence)"
ORIGIN = (
    "Polygon.io daily aggregates (OHLCV, VWAP), dividends and splits; Finnhub company news "
    "(some Polygon news), as collected by the StockBench benchmark (arXiv 2510.02209)"
)
DOW20 = (
    "GS", "MSFT", "HD", "V", "SHW", "CAT", "MCD", "UNH", "AXP", "AMGN",
    "TRV", "CRM", "JPM", "IBM", "HON", "BA", "AMZN", "AAPL", "PG", "JNJ",
)  # fmt: skip
FINNHUB_SHIFT = timedelta(hours=8)  # snapshot published_utc minus the true UTC instant
_PARTS = ("storage/parquet", "storage/cache/news_by_day", "storage/cache/corporate_actions")


@dataclass(frozen=True)
class Snapshot:
    """What the build keeps of the snapshot."""

    bars: dict[str, pd.DataFrame]  # symbol -> date-indexed open..vwap (as traded)
    news: pd.DataFrame
    dividends: pd.DataFrame
    splits: dict[str, list[tuple[date, float]]]
    news_shifted: int  # Finnhub items whose published_utc was eight hours late


def _archive(repo: Path) -> dict[str, bytes]:
    """Every file of the snapshot's parts at :data:`COMMIT`, by path."""
    try:
        tar = subprocess.run(
            ["git", "-C", str(repo), "archive", "--format=tar", COMMIT, *_PARTS],
            check=True,
            capture_output=True,
        ).stdout
    except subprocess.CalledProcessError as exc:
        raise SystemExit(
            f"{repo}: cannot read commit {COMMIT} ({exc.stderr.decode().strip()}); pass a "
            f"clone of {REPOSITORY} that contains it (git fetch origin {COMMIT})"
        ) from None
    files = {}
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        for member in archive.getmembers():
            handle = archive.extractfile(member)
            if member.isfile() and handle is not None:
                files[member.name] = handle.read()
    return files


def _bars(files: dict[str, bytes]) -> dict[str, pd.DataFrame]:
    frames: dict[str, list[pd.DataFrame]] = {}
    for path in sorted(files):
        parts = path.split("/")
        if len(parts) == 5 and parts[3] == "day" and path.endswith(".parquet"):
            day = pd.read_parquet(io.BytesIO(files[path]))
            if list(day["date"].astype(str)) != [parts[4].removesuffix(".parquet")]:
                raise ValueError(f"{path}: expected one row of its own date")
            frames.setdefault(parts[2], []).append(day)
    out = {}
    for symbol, days in frames.items():
        frame = pd.concat(days).set_index("date")
        frame.index = pd.DatetimeIndex(pd.to_datetime(frame.index))
        out[symbol] = frame[["open", "high", "low", "close", "volume", "vwap"]].astype("float64")
    return out


def _news_row(symbol: str, day: str, item: dict[str, object]) -> dict[str, object]:
    stamp = str(item["published_utc"])
    if "datetime" in item:  # Finnhub: the epoch is the instant; published_utc is UTC+8
        published = datetime.fromtimestamp(int(str(item["datetime"])), tz=UTC)
        labelled = datetime.fromisoformat(stamp).replace(tzinfo=UTC)
        if labelled - published != FINNHUB_SHIFT:
            raise ValueError(f"{symbol} {day}: published_utc {stamp} is not the epoch + 8 h")
        # Its url is a Finnhub API redirect (an opaque id, needing a key): not kept.
        publisher, url = item.get("source"), None
    else:  # Polygon: published_utc is UTC ("...Z")
        published = datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(UTC)
        owner = item.get("publisher")
        publisher = owner.get("name") if isinstance(owner, dict) else None
        url = item.get("article_url")
    title = str(item["title"]).strip()
    summary = str(item.get("description") or "").strip()
    return {
        "symbol": symbol,
        "published_at": pd.Timestamp(published),
        "title": title,
        "summary": None if summary in ("", title) else summary,
        "publisher": publisher or None,
        "url": url or None,
        "source_day": date.fromisoformat(day),
    }


def _news(files: dict[str, bytes]) -> pd.DataFrame:
    rows = []
    for path in sorted(files):
        parts = path.split("/")
        if parts[:3] == ["storage", "cache", "news_by_day"] and path.endswith(".json"):
            for item in json.loads(files[path])["items"]:
                rows.append(_news_row(parts[3], parts[4].removesuffix(".json"), item))
    frame = pd.DataFrame(rows)
    frame["published_at"] = pd.to_datetime(frame["published_at"], utc=True).dt.as_unit("s")
    frame = frame.drop_duplicates(["symbol", "published_at", "title", "url"])
    frame = frame.sort_values(["symbol", "published_at", "title"], kind="stable")
    return frame.reset_index(drop=True)


def _actions(files: dict[str, bytes]) -> tuple[pd.DataFrame, dict[str, list[tuple[date, float]]]]:
    rows = []
    splits: dict[str, list[tuple[date, float]]] = {}
    for path in sorted(files):
        name = path.rsplit("/", 1)[-1]
        if name.endswith(".dividends.json"):
            for r in json.loads(files[path]):
                rows.append(
                    {
                        "symbol": r["ticker"],
                        "ex_date": r["ex_dividend_date"],
                        "amount": float(r["cash_amount"]),
                        "declared": r.get("declaration_date") or "",
                        "pay_date": r.get("pay_date") or "",
                        "kind_code": r.get("dividend_type", "CD"),
                    }
                )
        elif name.endswith(".splits.json"):
            symbol = name.removesuffix(".splits.json")
            splits[symbol] = sorted(
                (date.fromisoformat(r["execution_date"]), r["split_to"] / r["split_from"])
                for r in json.loads(files[path])
            )
    frame = pd.DataFrame(rows).sort_values(["symbol", "ex_date", "amount"]).reset_index(drop=True)
    if frame.duplicated(["symbol", "ex_date", "kind_code"]).any():
        raise ValueError("two dividends of one kind on one ex-date in the snapshot")
    return frame, splits


def read_snapshot(repo: Path) -> Snapshot:
    """The snapshot at :data:`COMMIT` of the clone ``repo``."""
    files = _archive(repo)
    news = _news(files)
    shifted = sum(
        1
        for path, raw in files.items()
        if "/news_by_day/" in path
        for item in json.loads(raw)["items"]
        if "datetime" in item
    )
    dividends, splits = _actions(files)
    return Snapshot(_bars(files), news, dividends, splits, shifted)


def adjusted_close(close: pd.Series, dividends: pd.DataFrame) -> pd.Series:
    """A total-return close: each bar scaled by ``1 - amount / previous close`` for every
    ex-date after it (the CRSP/Yahoo convention), equal to the close on the last bar.

    A reader rebases it to the close of ``as_of``, so an ex-date after ``as_of`` scales
    the whole window alike and drops out of every return.
    """
    factor = pd.Series(1.0, index=close.index)
    for ex_date, amount in zip(dividends["ex_date"], dividends["amount"], strict=True):
        ex = pd.Timestamp(ex_date)
        before = close.index < ex
        if before.any() and (close.index >= ex).any():
            previous = float(close[before].iloc[-1])
            factor[before] *= 1.0 - amount / previous
    return close * factor


# name, asset type, exchange, sector (of the data period)
NAMES: dict[str, tuple[str, str, str, str | None]] = {
    "GS": ("The Goldman Sachs Group, Inc.", "equity", "NYSE", "Financials"),
    "MSFT": ("Microsoft Corporation", "equity", "NASDAQ", "Information Technology"),
    "HD": ("The Home Depot, Inc.", "equity", "NYSE", "Consumer Discretionary"),
    "V": ("Visa Inc.", "equity", "NYSE", "Financials"),
    "SHW": ("The Sherwin-Williams Company", "equity", "NYSE", "Materials"),
    "CAT": ("Caterpillar Inc.", "equity", "NYSE", "Industrials"),
    "MCD": ("McDonald's Corporation", "equity", "NYSE", "Consumer Discretionary"),
    "UNH": ("UnitedHealth Group Incorporated", "equity", "NYSE", "Health Care"),
    "AXP": ("American Express Company", "equity", "NYSE", "Financials"),
    "AMGN": ("Amgen Inc.", "equity", "NASDAQ", "Health Care"),
    "TRV": ("The Travelers Companies, Inc.", "equity", "NYSE", "Financials"),
    "CRM": ("Salesforce, Inc.", "equity", "NYSE", "Information Technology"),
    "JPM": ("JPMorgan Chase & Co.", "equity", "NYSE", "Financials"),
    "IBM": ("International Business Machines Corporation", "equity", "NYSE",
            "Information Technology"),
    "HON": ("Honeywell International Inc.", "equity", "NASDAQ", "Industrials"),
    "BA": ("The Boeing Company", "equity", "NYSE", "Industrials"),
    "AMZN": ("Amazon.com, Inc.", "equity", "NASDAQ", "Consumer Discretionary"),
    "AAPL": ("Apple Inc.", "equity", "NASDAQ", "Information Technology"),
    "PG": ("The Procter & Gamble Company", "equity", "NYSE", "Consumer Staples"),
    "JNJ": ("Johnson & Johnson", "equity", "NYSE", "Health Care"),
    "SPY": ("SPDR S&P 500 ETF Trust", "etf", "NYSE Arca", None),
}  # fmt: skip
_BAR_ORDER = ("open", "high", "low", "close", "adj_close", "volume", "vwap")
# Where two sources overlap, their closes must agree this closely to be joined.
SEAM_TOLERANCE = 0.005


def _dividends_of(snap: Snapshot, symbol: str) -> pd.DataFrame:
    return snap.dividends[snap.dividends["symbol"] == symbol]


def snapshot_bars(snap: Snapshot, symbol: str) -> pd.DataFrame:
    """The snapshot's bars of ``symbol`` with a total-return ``adj_close``."""
    frame = snap.bars[symbol].copy()
    if symbol in snap.splits:  # its corporate actions are on record (SPY's are not)
        frame["adj_close"] = adjusted_close(frame["close"], _dividends_of(snap, symbol))
    return frame[[c for c in _BAR_ORDER if c in frame]]


def extend(earlier: pd.DataFrame, later: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, object]]:
    """``earlier`` followed by the days of ``later`` after its last one.

    Where they overlap the closes must agree within :data:`SEAM_TOLERANCE` and the earlier
    adjusted close is rescaled to meet the later one on the last common day; where they do
    not, the hole between them is recorded (never bridged).

    Raises:
        ValueError: They overlap and disagree.
    """
    both = earlier.index.intersection(later.index)
    kept = later[later.index > earlier.index[-1]]
    seam: dict[str, object] = {"from": kept.index[0].date().isoformat(), "package": "stockbench"}
    if len(both) and "close" in earlier:
        gap = float((later.loc[both, "close"] / earlier.loc[both, "close"] - 1).abs().max())
        if gap > SEAM_TOLERANCE:
            raise ValueError(f"the snapshot disagrees by {gap:.2%} on {len(both)} common days")
        last = both[-1]
        if "adj_close" in earlier:
            k = (later.at[last, "adj_close"] / later.at[last, "close"]) / (
                earlier.at[last, "adj_close"] / earlier.at[last, "close"]
            )
            earlier = earlier.assign(adj_close=earlier["adj_close"] * k)
        seam |= {
            "common_days": len(both),
            "last_common_day": last.date().isoformat(),
            "max_close_gap": round(gap, 6),
        }
    else:
        seam |= {
            "common_days": 0,
            "hole": [earlier.index[-1].date().isoformat(), kept.index[0].date().isoformat()],
        }
    joined = pd.concat([earlier, kept])
    return joined[[c for c in _BAR_ORDER if c in joined]], seam


def session_ranges(dates: pd.DatetimeIndex, *, every_day: bool = False) -> list[list[str]]:
    """Runs of consecutive sessions (XNYS, or calendar days when ``every_day``) present."""
    from alphadesk.data.calendar import sessions_between

    days = [d.date() for d in dates]
    if every_day:
        expected = pd.date_range(days[0], days[-1]).date.tolist()
    else:
        expected = sessions_between(days[0], days[-1])
    position = {d: i for i, d in enumerate(expected)}
    runs: list[list[str]] = []
    previous = None
    for day in days:
        i = position.get(day)
        if i is None:  # a bar on a day the calendar does not list: keep it in its run
            continue
        if previous is None or i != previous + 1:
            runs.append([day.isoformat(), day.isoformat()])
        else:
            runs[-1][1] = day.isoformat()
        previous = i
    return runs


def split_report(snap: Snapshot, actions: object) -> list[str]:
    """How the snapshot's split records compare with the split table (build output)."""
    from alphadesk.data.actions import ActionTable

    assert isinstance(actions, ActionTable)
    lines = []
    for symbol, splits in sorted(snap.splits.items()):
        table = {(s.ex_date, round(s.ratio, 6)) for s in actions.splits(symbol)}
        for ex_date, ratio in splits:
            state = "in actions.csv" if (ex_date, round(ratio, 6)) in table else "NOT in table"
            lines.append(f"split {symbol} {ex_date} {ratio:g}:1 (Polygon) {state}")
    return lines


def dividend_basis(snap: Snapshot, symbol: str) -> str:
    """The manifest's ``prices.dividends`` text for a symbol the snapshot covers."""
    if symbol not in snap.bars or symbol == "SPY":
        return ""
    rows = _dividends_of(snap, symbol)
    if rows.empty:
        return "none paid: Polygon's dividend records (via StockBench) list none"
    return (
        f"{len(rows)} cash dividends {rows['ex_date'].min()}..{rows['ex_date'].max()} in "
        "actions.csv (Polygon records via StockBench): credited on the ex-date; adj_close "
        "of the snapshot's bars computed from them"
    )


_ACTION_COLUMNS = ("symbol", "ex_date", "kind", "ratio", "amount", "declared", "pay_date",
                   "source", "checked")  # fmt: skip


def write_actions(snap: Snapshot, path: Path) -> int:
    """Rewrite ``path``: its split rows as they are, then the snapshot's dividends."""
    import csv

    with path.open(newline="") as handle:
        splits = [r for r in csv.DictReader(handle) if r["kind"] == "split"]
    rows = [{c: r.get(c) or "" for c in _ACTION_COLUMNS} for r in splits]
    for r in snap.dividends.itertuples():
        special = " (special)" if r.kind_code == "SC" else ""
        rows.append(
            {
                "symbol": r.symbol,
                "ex_date": r.ex_date,
                "kind": "dividend",
                "ratio": "",
                "amount": f"{r.amount:g}",
                "declared": r.declared,
                "pay_date": r.pay_date,
                "source": f"Polygon via StockBench{special}",
                "checked": "",
            }
        )
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(_ACTION_COLUMNS), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return len(snap.dividends)


def write_news(snap: Snapshot, path: Path) -> Path:
    snap.news.to_parquet(path, compression="zstd", compression_level=19, index=False)
    return path


def news_entry(snap: Snapshot, path: Path, root: Path) -> dict[str, object]:
    """The manifest's ``news`` entry: file, checksum, time basis and coverage per symbol."""
    import hashlib

    news = snap.news
    symbols = {
        symbol: {
            "first": str(group["published_at"].min().date()),
            "last": str(group["published_at"].max().date()),
            "items": len(group),
        }
        for symbol, group in news.groupby("symbol", sort=True)
    }
    return {
        "file": path.relative_to(root).as_posix(),
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "rows": len(news),
        "time": "published_at: the UTC instant of publication; an item is known from it",
        "fields": list(news.columns),
        "source": {
            "package": "stockbench",
            "version": COMMIT[:12],
            "dataset": f"{REPOSITORY} at {COMMIT}: storage/cache/news_by_day/<SYMBOL>/*.json",
            "origin": ORIGIN,
            "licence": LICENCE,
        },
        "notes": [
            f"{snap.news_shifted} Finnhub items: published_utc in the snapshot is the epoch "
            "datetime written in UTC+8; published_at is the epoch's UTC instant (8 h earlier)",
            "source_day: the snapshot's day file the item is listed under",
            "summary is absent where the source repeats the title",
        ],
        "symbols": symbols,
    }


def close_from_adjusted(adj_close: pd.Series, dividends: pd.DataFrame) -> pd.Series:
    """As-traded closes of an adjusted-close-only series (each day's shares), from its
    dividend records: going back from the series' end (where adj_close is the close), at
    each ex-date ``close[e-1] = adj[e-1] / F + amount`` and ``F`` becomes
    ``adj[e-1] / close[e-1] * ...`` (the multiplicative convention of the source's
    adjustment). Before the first record the dividends are unknown: NaN there.
    """
    close = pd.Series(float("nan"), index=adj_close.index)
    if dividends.empty:
        return close
    first = pd.Timestamp(dividends["ex_date"].min())
    amounts = dividends.groupby("ex_date")["amount"].sum()
    by_bar: dict[int, float] = {}
    for ex_date, amount in amounts.items():
        at = int(adj_close.index.searchsorted(pd.Timestamp(str(ex_date))))
        if 0 < at < len(adj_close):
            by_bar[at] = by_bar.get(at, 0.0) + float(amount)
    values = adj_close.to_numpy(dtype="float64")
    out = close.to_numpy(copy=True)
    factor = 1.0
    for t in range(len(values) - 1, -1, -1):
        if adj_close.index[t] < first:
            break
        out[t] = values[t] / factor
        paid = by_bar.get(t)
        if paid:  # bar t is an ex-date: the bars before it carry this dividend
            before = values[t - 1] / factor + paid
            factor = values[t - 1] / before
    return pd.Series(out, index=adj_close.index, name="close")


# skfolio's adjusted closes end 2022-12-28 but embed the dividends up to about mid-2023:
# with the ex-dates to 2023-06-30 divided out, the five series' 2015-12-31 closes come
# within 0.3 % of the published ones (0.7-1.8 % low without; 2023-07-05's JPM ex-date
# would overshoot). The 2023 dividends' prices are unknown (a hole): the last close
# stands in, a second-order error (about 0.1 % of the level).
SKFOLIO_DIVIDEND_VINTAGE = "2023-06-30"


def skfolio_close(snap: Snapshot, symbol: str, adj_close: pd.Series) -> pd.Series | None:
    """As-traded closes of a skfolio series from the snapshot's dividends (None: no records)."""
    rows = _dividends_of(snap, symbol)
    if rows.empty:
        return None
    close = close_from_adjusted(adj_close, rows)
    end = str(adj_close.index[-1].date())
    later = rows[(rows["ex_date"] > end) & (rows["ex_date"] <= SKFOLIO_DIVIDEND_VINTAGE)]
    scale = 1.0
    for amount in later["amount"]:
        scale *= 1.0 - float(amount) / float(close.iloc[-1])
    return close / scale


def skfolio_basis(snap: Snapshot, symbol: str) -> str:
    rows = _dividends_of(snap, symbol)
    return (
        f"close derived from the adjusted close from {rows['ex_date'].min()} (the first "
        "dividend record) to 2022-12-28 with Polygon's dividend records, the source's "
        f"adjustment taken as of {SKFOLIO_DIVIDEND_VINTAGE} (2015-12-31 closes within 0.3 % "
        "of the published); before the first record adj_close only"
    )


# Polygon's statement keys -> the us-gaap concepts alphadesk.data.fundamentals reads.
POLYGON_CONCEPTS = {
    "revenues": "Revenues",
    "cost_of_revenue": "CostOfRevenue",
    "gross_profit": "GrossProfit",
    "operating_income_loss": "OperatingIncomeLoss",
    "net_income_loss_attributable_to_parent": "NetIncomeLoss",
    "diluted_earnings_per_share": "EarningsPerShareDiluted",
    "net_cash_flow_from_operating_activities": "NetCashProvidedByUsedInOperatingActivities",
    "depreciation_and_amortization": "DepreciationDepletionAndAmortization",
    "assets": "Assets",
    "current_assets": "AssetsCurrent",
    "liabilities": "Liabilities",
    "current_liabilities": "LiabilitiesCurrent",
    "long_term_debt": "LongTermDebt",  # Polygon's includes the current part
    "equity_attributable_to_parent": "StockholdersEquity",
}
_STOCK_KEYS = {"assets", "current_assets", "liabilities", "current_liabilities", "long_term_debt",
               "equity_attributable_to_parent"}  # fmt: skip


def statements(repo: Path) -> tuple[pd.DataFrame, int]:
    """Polygon's quarterly and annual statements as facts (the SEC bundle's columns plus
    ``known_at``: the filing's EDGAR acceptance, else the next session's open after its
    filing date). Rows Polygon derived without a filing (a Q4 from the 10-K) are left
    out, and how many is returned."""
    from alphadesk.data.calendar import next_session_open

    tar = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", COMMIT, "storage/cache/financials"],
        check=True,
        capture_output=True,
    ).stdout
    rows, derived = [], 0
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        for member in sorted(archive.getmembers(), key=lambda m: m.name):
            name = member.name.rsplit("/", 1)[-1]
            handle = archive.extractfile(member)
            if handle is None or not name.endswith((".quarterly.json", ".annual.json")):
                continue
            symbol = name.split(".", 1)[0]
            for report in json.loads(handle.read()):
                if not report.get("filing_date"):
                    derived += 1
                    continue
                filed = date.fromisoformat(report["filing_date"])
                accepted = report.get("acceptance_datetime")
                known = (
                    datetime.fromisoformat(accepted.replace("Z", "+00:00"))
                    if accepted
                    else next_session_open(filed)
                )
                annual = report["timeframe"] == "annual"
                for section in report["financials"].values():
                    for key, item in section.items():
                        concept = POLYGON_CONCEPTS.get(key)
                        if concept is None or item.get("value") is None:
                            continue
                        rows.append(
                            {
                                "symbol": symbol,
                                "taxonomy": "us-gaap",
                                "concept": concept,
                                "unit": str(item["unit"]).replace(" ", ""),
                                "value": float(item["value"]),
                                "start": None if key in _STOCK_KEYS else report["start_date"],
                                "end": report["end_date"],
                                "filed": report["filing_date"],
                                "form": "10-K" if annual else "10-Q",
                                "fy": int(report["fiscal_year"]),
                                "fp": "FY" if annual else report["fiscal_period"],
                                "accn": str(report.get("source_filing_url", "")).rsplit("/", 1)[-1]
                                or None,
                                "known_at": pd.Timestamp(known).tz_convert("UTC"),
                            }
                        )
    frame = pd.DataFrame(rows).drop_duplicates(["symbol", "concept", "start", "end", "filed"])
    frame["fy"] = frame["fy"].astype("Int64")
    frame = frame.sort_values(["symbol", "concept", "end", "filed"], kind="stable")
    return frame.reset_index(drop=True), derived


def statement_report(polygon: pd.DataFrame, sec_facts: Path) -> list[str]:
    """Where Polygon's figures and the bundled SEC company facts cover the same concept and
    period, how far they agree (build output)."""
    sec = pd.read_parquet(sec_facts)
    # The same figure in the same filing (a later filing may restate it, e.g. per share
    # after a split).
    keys = ["symbol", "concept", "start", "end", "filed"]
    sec = sec[sec["symbol"].isin(set(polygon["symbol"]))].copy()
    sec["start"] = sec["start"].where(sec["start"].notna(), None)
    sec = sec.drop_duplicates(keys, keep="last")
    both = polygon.merge(sec, on=keys, suffixes=("", "_sec"))
    both = both[both["value_sec"].abs() > 0]
    gap = (both["value"] / both["value_sec"] - 1).abs()
    lines = [
        f"statements: {len(both)} figures in both Polygon and SEC company facts; "
        f"{int((gap <= 0.005).sum())} agree within 0.5 %"
    ]
    for row, g in zip(both[gap > 0.005].itertuples(), gap[gap > 0.005], strict=True):
        lines.append(
            f"  differ {row.symbol} {row.concept} {row.start}..{row.end}: Polygon "
            f"{row.value:g}, SEC {row.value_sec:g} ({g:.1%})"
        )
    return lines


def write_statements(repo: Path, root: Path) -> dict[str, object]:
    """``statements.parquet``: Polygon's figures of the companies the bundled SEC archive
    lacks, and its manifest entry.
    Prints how Polygon and the SEC facts compare where both have a figure."""
    import hashlib

    polygon, derived = statements(repo)
    sec_path = root / "sec" / "facts.parquet"
    for line in statement_report(polygon, sec_path):
        print(line)
    sec = pd.read_parquet(sec_path)
    keys = ["symbol", "concept", "start", "end"]
    sec["start"] = sec["start"].where(sec["start"].notna(), None)
    known = set(map(tuple, sec[keys].astype(str).to_numpy().tolist()))
    # A company the SEC archive holds keeps its SEC facts alone (they agree, above).
    rows = polygon[keys].astype(str).to_numpy().tolist()
    fresh = pd.Series([tuple(k) not in known for k in rows])
    kept = polygon[fresh & ~polygon["symbol"].isin(set(sec["symbol"]))]
    kept = kept.reset_index(drop=True)
    path = root / "statements.parquet"
    kept.to_parquet(path, compression="zstd", compression_level=19, index=False)
    print(
        f"statements: {len(kept)} of {len(polygon)} Polygon figures kept (the others' "
        f"companies have SEC facts); {derived} derived reports without a filing left out"
    )
    return {
        "file": path.name,
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "rows": len(kept),
        "time": "known_at: the filing's EDGAR acceptance (UTC), else the next session's "
        "open after its filing date",
        "source": {
            "package": "stockbench",
            "version": COMMIT[:12],
            "dataset": f"{REPOSITORY} at {COMMIT}: storage/cache/financials/"
            "<SYMBOL>.{quarterly,annual}.json",
            "origin": "Polygon.io financials (XBRL statements of SEC filings), via StockBench",
            "licence": LICENCE,
        },
        "years": {
            str(symbol): f"{group['fy'].min()}-{group['fy'].max()}"
            for symbol, group in kept.groupby("symbol", sort=True)
        },
        "notes": [
            "figures of the companies the bundled SEC archive lacks; concepts mapped to "
            "us-gaap names: " + ", ".join(f"{k}={v}" for k, v in POLYGON_CONCEPTS.items()),
        ],
    }

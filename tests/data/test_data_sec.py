"""The sec provider against a real local HTTP server serving EDGAR-shaped JSON."""

from __future__ import annotations

import socket
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from datahelpers import (
    CIK,
    NOW,
    RECENT,
    UA,
    Edgar,
    edgar_arrays,
    fixed_clock,
    serve_sec_documents,
)

from alphadesk.data import (
    MalformedResponse,
    NoData,
    NotConfigured,
    ProviderUnavailable,
    RateLimited,
)
from alphadesk.data.cache import DataCache
from alphadesk.data.providers.sec import SecProvider


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def sec(edgar: Edgar, sleeps: list[float]) -> SecProvider:
    serve_sec_documents(edgar)
    return SecProvider(
        UA, data_url=edgar.url, www_url=edgar.url, clock=fixed_clock(NOW), sleep=sleeps.append
    )


def test_filings_are_known_at_acceptance_read_conservatively(sec: SecProvider) -> None:
    # The 8-K says 16:30:31Z. Read as New York time it is public at 20:30 UTC; read as
    # UTC it would be 12:30 New York, mid-session: the later reading is taken.
    at_four = sec.filings("AAPL", datetime(2024, 5, 2, 20, 0, tzinfo=UTC))
    assert [f.form for f in at_four.items] == ["10-Q", "10-K"]
    at_five = sec.filings("AAPL", datetime(2024, 5, 2, 21, 0, tzinfo=UTC))
    assert at_five.items[-1].form == "8-K"
    assert at_five.items[-1].known_at == datetime(2024, 5, 2, 20, 30, 31, tzinfo=UTC)
    assert at_five.items[-1].url == (
        f"{sec._www_url}/Archives/edgar/data/320193/000032019324000065/aapl-20240502.htm"
    )
    everything = sec.filings("AAPL", NOW, forms=["10-q"])
    assert [f.accession_number for f in everything.items] == [
        "0000320193-15-000010",
        "0000320193-24-000069",
    ]
    assert everything.provenance.provider == "sec"


def test_older_pages_are_read_only_for_old_as_of(sec: SecProvider, edgar: Edgar) -> None:
    sec.filings("AAPL", NOW)
    assert not any("submissions-001" in path for path, _ in edgar.requests)
    old = sec.filings("AAPL", datetime(2013, 1, 1, tzinfo=UTC))
    assert [f.form for f in old.items] == ["8-K", "10-K"]
    assert old.items[0].filing_date == date(2012, 7, 24)
    assert any("submissions-001" in path for path, _ in edgar.requests)


def test_every_request_carries_the_user_agent(sec: SecProvider, edgar: Edgar) -> None:
    sec.filings("AAPL", NOW)
    assert edgar.requests and all(agent == UA for _, agent in edgar.requests)


def test_facts_are_known_from_acceptance_or_the_next_open(sec: SecProvider) -> None:
    concept = "RevenueFromContractWithCustomerExcludingAssessedTax"
    # Filed Friday 2023-05-05 in a filing the list lacks: public at Monday's open.
    with pytest.raises(NoData, match="records start 2023-05-08T13:30"):
        sec.fundamentals("AAPL", datetime(2023, 5, 8, 13, 29, tzinfo=UTC))
    next_day = sec.fundamentals("AAPL", datetime(2023, 5, 8, 13, 30, tzinfo=UTC))
    latest = next_day.latest(concept)
    assert latest is not None and latest.value == 94_836_000_000
    assert latest.end == date(2023, 4, 1) and latest.form == "10-Q"
    now = sec.fundamentals("AAPL", NOW)
    history = now.history(concept, "USD")
    assert [f.value for f in history] == [94_800_000_000, 90_753_000_000]  # restated
    assert now.latest("EntityCommonStockSharesOutstanding") is not None
    assert "NetIncomeLoss" in now.concepts()


def test_identity_uses_the_name_of_the_time(sec: SecProvider) -> None:
    then = sec.instrument("AAPL", datetime(2005, 6, 1, tzinfo=UTC))
    assert then.name == "APPLE COMPUTER INC"
    now = sec.instrument("AAPL", NOW)
    assert (now.name, now.exchange, now.industry) == (
        "Apple Inc.",
        "Nasdaq",
        "Electronic Computers",
    )


def test_user_agent_is_required(edgar: Edgar) -> None:
    serve_sec_documents(edgar)
    for agent in (None, "  ", "no email here"):
        provider = SecProvider(agent, data_url=edgar.url, www_url=edgar.url)
        with pytest.raises(NotConfigured, match="ALPHADESK_DATA__SEC_USER_AGENT"):
            provider.filings("AAPL", NOW)
    assert edgar.requests == []


def test_rate_limit_backs_off_then_succeeds(
    sec: SecProvider, edgar: Edgar, sleeps: list[float]
) -> None:
    ok = edgar.routes["/files/company_tickers.json"]
    assert isinstance(ok, tuple)
    edgar.sequence(
        "/files/company_tickers.json",
        [(429, {"Retry-After": "3"}, b"slow down"), (503, {}, b"busy"), ok],
    )
    assert sec.filings("AAPL", NOW).items
    assert 3.0 in sleeps and 2.0 in sleeps  # Retry-After honoured, else doubled backoff


def test_rate_limit_exhausted_is_rate_limited(sec: SecProvider, edgar: Edgar) -> None:
    edgar.sequence("/files/company_tickers.json", [(429, {"Retry-After": "1"}, b"")])
    with pytest.raises(RateLimited) as caught:
        sec.filings("AAPL", NOW)
    assert caught.value.retry_after == 1.0
    assert len(edgar.requests) == 4  # the first try and three retries


@pytest.mark.slow
def test_malformed_responses(sec: SecProvider, edgar: Edgar) -> None:
    edgar.json(f"/submissions/{CIK}.json", {"cik": "320193", "name": "Apple Inc."})
    with pytest.raises(MalformedResponse, match="filings"):
        sec.filings("AAPL", NOW)
    edgar.routes[f"/api/xbrl/companyfacts/{CIK}.json"] = (200, {}, b"<html>oops</html>")
    with pytest.raises(MalformedResponse, match="invalid JSON"):
        sec.fundamentals("AAPL", NOW)
    edgar.json(
        f"/api/xbrl/companyfacts/{CIK}.json",
        {
            "cik": 320193,
            "facts": {
                "us-gaap": {"Revenues": {"units": {"USD": [{"end": "2024-01-01", "val": 1}]}}}
            },
        },
    )
    with pytest.raises(MalformedResponse, match="filed"):
        sec.fundamentals("AAPL", NOW)  # the broken filing list alone does not stop facts


def test_ragged_filing_arrays_are_malformed(sec: SecProvider, edgar: Edgar) -> None:
    arrays = edgar_arrays(RECENT)
    arrays["form"] = arrays["form"][:2]
    edgar.json(f"/submissions/{CIK}.json", {"name": "Apple Inc.", "filings": {"recent": arrays}})
    with pytest.raises(MalformedResponse, match="lengths"):
        sec.filings("AAPL", NOW)


def test_unknown_ticker_and_missing_documents(sec: SecProvider, edgar: Edgar) -> None:
    with pytest.raises(NoData) as caught:
        sec.filings("AAPLE", NOW)
    assert "AAPL" in caught.value.suggestions
    del edgar.routes[f"/api/xbrl/companyfacts/{CIK}.json"]
    with pytest.raises(NoData, match="no document"):
        sec.fundamentals("AAPL", NOW)
    with pytest.raises(NoData, match="no document"):
        sec.filings("BRK.B", NOW)  # mapped to EDGAR's BRK-B, whose documents are absent
    assert any("CIK0001067983" in path for path, _ in edgar.requests)


def test_unreachable_server_is_provider_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again when the block ends
    provider = SecProvider(
        UA, data_url=f"http://127.0.0.1:{port}", www_url=f"http://127.0.0.1:{port}", timeout_s=2
    )
    with pytest.raises(ProviderUnavailable, match="cannot reach EDGAR"):
        provider.filings("AAPL", NOW)


def test_answers_are_cached(edgar: Edgar, tmp_path: Path) -> None:
    serve_sec_documents(edgar)
    cache = DataCache(tmp_path / "cache.sqlite")
    first = SecProvider(
        UA,
        cache,
        data_url=edgar.url,
        www_url=edgar.url,
        clock=fixed_clock(NOW),
        sleep=lambda _: None,
    )
    first.fundamentals("AAPL", NOW)
    count = len(edgar.requests)
    second = SecProvider(
        UA,
        cache,
        data_url=edgar.url,
        www_url=edgar.url,
        clock=fixed_clock(NOW),
        sleep=lambda _: None,
    )
    facts = second.fundamentals("AAPL", datetime(2023, 12, 1, tzinfo=UTC))
    assert len(edgar.requests) == count  # served from the cache, then filtered
    assert facts.latest("NetIncomeLoss") is not None
    assert all(f.known_at <= datetime(2023, 12, 1, tzinfo=UTC) for f in facts.items)

"""Fixtures of the market-data tests: a fake yfinance and a local EDGAR server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from datahelpers import Edgar, FakeYahoo, make_fake_ticker, serve_edgar


@pytest.fixture
def fake_yahoo(monkeypatch: pytest.MonkeyPatch) -> FakeYahoo:
    """Patch ``yfinance.Ticker`` (and make ``download`` fail loudly: it is not used)."""
    import yfinance

    fake = FakeYahoo()
    monkeypatch.setattr(yfinance, "Ticker", make_fake_ticker(fake))

    def no_download(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the yahoo provider must not use yf.download")

    monkeypatch.setattr(yfinance, "download", no_download)
    return fake


@pytest.fixture
def edgar() -> Iterator[Edgar]:
    """A real HTTP server on 127.0.0.1 serving EDGAR-shaped JSON."""
    with serve_edgar() as server:
        yield server

"""The provider chain and the factory: order per kind, attempts, typed fallbacks."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from alphadesk.config import Settings
from alphadesk.data import (
    DataKind,
    InvalidSymbol,
    MarketData,
    NoData,
    NotConfigured,
    NotSupported,
    ProviderChain,
    RateLimited,
    build_provider,
)
from alphadesk.data.models import Instrument, Provenance
from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.data.providers.local import LocalProvider

AS_OF = datetime(2012, 6, 1, 21, tzinfo=UTC)


class Failing(BundledProvider):
    """A provider that fails every identity question with a chosen error."""

    def __init__(self, name: str, error: Exception) -> None:
        super().__init__()
        self.name = name  # type: ignore[misc]
        self._error = error

    def _instrument(self, symbol: str, as_of: datetime) -> Instrument:
        raise self._error


def test_first_answer_wins_and_attempts_are_reported() -> None:
    chain = ProviderChain([Failing("flaky", RateLimited("slow down")), BundledProvider()])
    result = chain.instrument("AAPL", AS_OF)
    assert result.provenance.provider == "bundled"
    assert [(a.provider, a.error) for a in result.provenance.attempts] == [("flaky", "RateLimited")]


def test_bars_fall_back_past_an_unconfigured_provider() -> None:
    chain = ProviderChain([LocalProvider(None), BundledProvider()])
    bars = chain.daily_bars("AAPL", AS_OF)
    assert bars.provenance.provider == "bundled"
    assert bars.provenance.attempts[0].error == "NotConfigured"


def test_invalid_symbols_stop_the_chain() -> None:
    chain = ProviderChain([BundledProvider()])
    for bad in ("AAPL;rm -rf /", "../etc", "A B", "$(x)", "X" * 21, "", "..", "a/b"):
        with pytest.raises(InvalidSymbol):
            chain.daily_bars(bad, AS_OF)


def test_all_failing_reports_every_attempt_and_suggestions() -> None:
    chain = ProviderChain([LocalProvider(None), BundledProvider()])
    with pytest.raises(NoData) as caught:
        chain.daily_bars("APPL", AS_OF)
    message = str(caught.value)
    assert "local:" in message and "bundled:" in message
    assert caught.value.suggestions[0] == "AAPL"
    assert [a.provider for a in caught.value.attempts] == ["local", "bundled"]


def test_unconfigured_everywhere_is_not_configured() -> None:
    chain = ProviderChain([LocalProvider(None)])
    with pytest.raises(NotConfigured):
        chain.daily_bars("AAPL", AS_OF)


def test_a_kind_nobody_serves_is_not_supported() -> None:
    chain = ProviderChain([BundledProvider()])
    assert not chain.supports(DataKind.SHORT_INTEREST)
    with pytest.raises(NotSupported, match="ALPHADESK_DATA__PROVIDERS"):
        chain.short_interest("AAPL", AS_OF)


def test_order_per_kind_overrides_the_default() -> None:
    flaky = Failing("flaky", NoData("none"))
    bundled = BundledProvider()
    chain = ProviderChain([flaky, bundled], order={DataKind.INSTRUMENT: ["bundled", "flaky"]})
    assert [p.name for p in chain.order_for(DataKind.INSTRUMENT)] == ["bundled", "flaky"]
    assert chain.instrument("AAPL", AS_OF).provenance.attempts == []
    with pytest.raises(ValueError, match="unknown providers"):
        ProviderChain([bundled], order={DataKind.NEWS: ["yahoo"]})
    with pytest.raises(ValueError, match="unique"):
        ProviderChain([bundled, BundledProvider()])


def test_build_provider_defaults_to_bundled_then_modeled(tmp_path: Path) -> None:
    market = build_provider(Settings(data_dir=tmp_path))
    assert isinstance(market, MarketData)
    assert [p.name for p in market.providers] == ["bundled", "modeled"]
    chain = market.option_chain("AAPL", AS_OF)
    assert chain.provenance.origin == "modeled"
    assert [a.provider for a in chain.provenance.attempts] == []  # bundled has no chains


def test_build_provider_with_every_provider(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path,
        data={
            "providers": ["local", "yahoo", "bundled", "sec"],
            "local_dir": tmp_path,
            "sec_user_agent": "Tests tests@example.com",
        },
    )
    market = build_provider(settings)
    assert [p.name for p in market.providers] == ["local", "yahoo", "bundled", "sec", "modeled"]
    assert [p.name for p in market.order_for(DataKind.FILINGS)] == ["bundled", "sec"]
    assert [p.name for p in market.order_for(DataKind.OPTION_CHAIN)] == ["yahoo", "modeled"]


def test_build_provider_rejects_unknown_names(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="bloomberg"):
        build_provider(Settings(data_dir=tmp_path, data={"providers": ["bloomberg"]}))
    with pytest.raises(ValueError, match="source of bars"):
        build_provider(Settings(data_dir=tmp_path, data={"providers": ["modeled"]}))


def test_provenance_is_typed() -> None:
    with pytest.raises(ValueError):
        Provenance(provider="x", origin="guessed", retrieved_at=AS_OF)  # type: ignore[arg-type]

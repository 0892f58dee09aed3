"""Pytest fixtures from ``tests.support``, registered by ``tests/conftest.py``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import pandas as pd
import pytest

from alphadesk.backtest import frame_from_bars
from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.base import MarketData
from alphadesk.data.providers.bundled import BundledProvider
from tests.support.openai_server import OpenAIServer

__all__ = ["bars", "market", "openai_server", "sandbox", "settings"]


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings whose stores live in a temporary folder."""
    return Settings(data_dir=tmp_path / "alphadesk")


@pytest.fixture
def market(settings: Settings) -> MarketData:
    """The provider those settings build: the bundled data, offline."""
    return build_provider(settings)


@pytest.fixture
def sandbox() -> None:
    """The real strategy sandbox, or a skip saying why it cannot run here."""
    from alphadesk.backtest.sandbox import SandboxUnavailable, find_sandbox

    try:
        find_sandbox()
    except SandboxUnavailable as exc:
        pytest.skip(f"no strategy sandbox on this machine: {exc}")


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A scriptable OpenAI-compatible server on 127.0.0.1, stopped after the test."""
    with OpenAIServer() as server:
        yield server


@pytest.fixture(scope="session")
def bars() -> Callable[[str, str, str], pd.DataFrame]:
    """``bars(symbol, first_day, last_day)``: adjusted OHLCV of a bundled symbol, ready to
    backtest."""
    provider = BundledProvider()
    cache: dict[tuple[str, str, str], pd.DataFrame] = {}

    def load(symbol: str, first: str, last: str) -> pd.DataFrame:
        key = (symbol, first, last)
        if key not in cache:
            end = datetime.combine(date.fromisoformat(last), datetime.max.time(), tzinfo=UTC)
            daily = provider.daily_bars(symbol, end).since(date.fromisoformat(first))
            cache[key] = frame_from_bars(daily)[0]
        return cache[key]

    return load

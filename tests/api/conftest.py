"""One API server for the session on 127.0.0.1 (a private data folder, memory off: the
desk's vector memory is tested on its own), plus helpers shared by the API tests."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.base import MarketData
from alphadesk.store import RunStore
from tests.support.live_api import LiveApi

DAY = "2021-06-30"


def api_settings(root: Path) -> Settings:
    return Settings(data_dir=root, memory={"enabled": False})


@pytest.fixture(scope="session")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveApi]:
    with LiveApi(api_settings(tmp_path_factory.mktemp("api"))) as live:
        yield live


@pytest.fixture
def client(api: LiveApi) -> Iterator[httpx.Client]:
    with api.client() as c:
        yield c


def run_count(settings: Settings) -> int:
    return len(RunStore(settings.store_path).recent(limit=100_000))


def wait_finished(settings: Settings, run_id: str, timeout: float = 120) -> Any:
    """The run record once it is no longer 'running' (the margin: runs here end in seconds,
    a busy machine may take a minute)."""
    store = RunStore(settings.store_path)
    deadline = time.monotonic() + timeout
    while (run := store.get(run_id)).status == "running":
        assert time.monotonic() < deadline, f"run {run_id} still running after {timeout} s"
        time.sleep(0.05)
    return run


class SlowMarket:
    """The bundled market, with every daily-bar read taking ``delay`` seconds longer: a run
    that is surely still going when a test acts on it."""

    def __init__(self, inner: MarketData, delay: float) -> None:
        self._inner, self._delay = inner, delay

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def daily_bars(self, symbol: str, as_of: datetime, **kwargs: Any) -> Any:
        time.sleep(self._delay)
        return self._inner.daily_bars(symbol, as_of, **kwargs)


def slow_market(settings: Settings, delay: float = 0.4) -> Any:
    return SlowMarket(build_provider(settings), delay)

"""A request's check that its symbol has data: concurrent requests for one symbol and day
share one read of the bars, a symbol found is not read again, and a symbol without data is
refused to every request that asked, then read again by the next (it may have come)."""

from __future__ import annotations

import asyncio
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest

from alphadesk.api.context import ApiContext
from alphadesk.data import build_provider
from alphadesk.data.calendar import close_on_or_before
from alphadesk.data.errors import NoData
from alphadesk.pipelines.csp.models import CspRequest
from alphadesk.pool import InProcess
from alphadesk.serving import ServerConfig
from tests.api.conftest import SlowMarket, api_settings


class CountingMarket(SlowMarket):
    """The bundled market, each daily-bar read slowed (so requests overlap) and counted."""

    def __init__(self, settings: Any) -> None:
        super().__init__(build_provider(settings), delay=0.05)
        self.reads: list[str] = []

    def daily_bars(self, symbol: str, as_of: datetime, **kwargs: Any) -> Any:
        self.reads.append(symbol)
        return super().daily_bars(symbol, as_of, **kwargs)


@pytest.fixture
def ctx(tmp_path: Path) -> ApiContext:
    settings = api_settings(tmp_path)
    market = CountingMarket(settings)
    return ApiContext(settings, ServerConfig(), market, InProcess(settings, market))  # type: ignore[arg-type]


def _request(symbol: str, day: date = date(2021, 6, 30)) -> CspRequest:
    return CspRequest(symbol=symbol, as_of=close_on_or_before(day))


async def test_concurrent_checks_of_a_symbol_share_one_read(ctx: ApiContext) -> None:
    market: CountingMarket = ctx.market  # type: ignore[assignment]
    checks = [ctx.preflight(_request(s)) for s in ["KO"] * 20 + ["JPM"] * 5]
    await asyncio.gather(*checks)
    assert sorted(market.reads) == ["JPM", "KO"]
    await ctx.preflight(_request("KO"))  # found before: not read again
    await ctx.preflight(_request("KO", date(2020, 6, 30)))  # another day is another check
    assert sorted(market.reads) == ["JPM", "KO", "KO"]


async def test_a_symbol_without_data_is_refused_to_each_and_read_again(ctx: ApiContext) -> None:
    market: CountingMarket = ctx.market  # type: ignore[assignment]
    results = await asyncio.gather(
        *(ctx.preflight(_request("ZZZQX")) for _ in range(5)), return_exceptions=True
    )
    assert all(isinstance(r, NoData) for r in results), results
    assert market.reads == ["ZZZQX"]
    with pytest.raises(NoData):
        await ctx.preflight(_request("ZZZQX"))
    assert market.reads == ["ZZZQX", "ZZZQX"]

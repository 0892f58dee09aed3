"""One compiled graph serves every request of the same shape: concurrent runs on it each
get their own nodes, and a request of another shape gets a graph of its own."""

from __future__ import annotations

import asyncio

from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.pipelines.base import compiled_graph
from alphadesk.pipelines.desk.models import DeskRequest
from alphadesk.pipelines.desk.pipeline import TradingDesk
from tests.pipelines.conftest import close_of
from tests.pipelines.desk.conftest import decide


def test_requests_alike_in_shape_share_one_compiled_graph(
    settings: Settings, market: MarketData
) -> None:
    desk = TradingDesk(settings, market)
    apple = DeskRequest(symbol="AAPL", as_of=close_of("2012-03-30"))
    exxon = DeskRequest(symbol="XOM", as_of=close_of("2020-03-31"))
    longer = apple.model_copy(update={"rounds": 2})
    fewer = apple.model_copy(update={"analysts": ["market"]})
    assert compiled_graph(desk, apple) is compiled_graph(desk, exxon)
    assert compiled_graph(desk, longer) is not compiled_graph(desk, apple)
    assert compiled_graph(desk, fewer) is not compiled_graph(desk, apple)
    assert set(compiled_graph(desk, fewer).nodes) < set(compiled_graph(desk, apple).nodes)


async def test_concurrent_runs_on_a_shared_graph_decide_as_runs_alone(
    settings: Settings, market: MarketData
) -> None:
    cases = [("AAPL", "2012-03-30"), ("XOM", "2020-03-31"), ("KO", "2015-06-30")]
    alone = [await decide(settings, market, symbol, day, memory=False) for symbol, day in cases]
    together = await asyncio.gather(
        *(decide(settings, market, symbol, day, memory=False) for symbol, day in cases)
    )
    for one, other in zip(alone, together, strict=True):
        assert other.decided() == one.decided()
    assert [r.symbol for r in together] == [symbol for symbol, _ in cases]

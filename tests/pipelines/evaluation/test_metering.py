"""A replayed decision reports the model calls and cost it first had, not zero."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from alphadesk.config import CacheMode
from alphadesk.llm.cache import CachedModel, ResponseCache
from alphadesk.llm.messages import RequestSettings, Usage, UserMessage
from alphadesk.llm.testing import FunctionModel
from alphadesk.pipelines.evaluation import decision
from alphadesk.pipelines.evaluation.walk import Metered

WHEN = datetime(2012, 6, 29, 20, 0, tzinfo=UTC)
PAID = Usage(requests=1, input_tokens=100, output_tokens=20, cost_usd=0.0125)


def test_a_cache_hit_counts_at_its_first_cost_but_not_as_live(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    asked = [UserMessage(content="buy?")]

    async def ask(mode: CacheMode) -> tuple[int, float, int, float]:
        paid = FunctionModel(lambda *_: "BUY", name="paid/model", usage=PAID)
        model = Metered(CachedModel(paid, cache, mode))
        with decision("AAPL", WHEN) as scope:
            await model.request(asked, [], RequestSettings())
        return scope.model_calls, scope.model_cost_usd, scope.live_calls, scope.live_cost_usd

    assert asyncio.run(ask(CacheMode.RECORD)) == (1, 0.0125, 1, 0.0125)
    assert asyncio.run(ask(CacheMode.REPLAY)) == (1, 0.0125, 0, 0.0)

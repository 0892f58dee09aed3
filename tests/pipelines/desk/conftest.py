"""Helpers for the trading desk's tests: running the desk, a local data folder made from
the bundled bars (to alter the data at as_of), and an in-memory stand-in for the vector
memory with the same interface."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.pipelines.base import PipelineRun, run_graph
from alphadesk.pipelines.desk.models import DeskRequest, DeskResult
from alphadesk.pipelines.desk.pipeline import TradingDesk
from tests.pipelines.conftest import close_of

__all__ = ["FakeMemory", "decide", "write_local_bars"]


async def decide(
    settings: Settings,
    market: MarketData,
    symbol: str,
    day: str,
    *,
    models: dict[str, Any] | None = None,
    events: list[Any] | None = None,
    run_dir: Path | None = None,
    **fields: Any,
) -> DeskResult:
    """One desk analysis outside the runner (no recording)."""
    desk = TradingDesk(settings, market, models=models)
    request = DeskRequest(symbol=symbol, as_of=close_of(day), **fields)
    sink = events.append if events is not None else (lambda _e: None)
    session = PipelineRun(
        run_id=f"{symbol}-{day}", emit=sink, run_dir=run_dir, charts=run_dir is not None
    )
    result = await run_graph(desk, request, session)
    assert result is not None
    return result


def write_local_bars(root: Path, symbol: str, frame: pd.DataFrame) -> Path:
    """``frame`` (bars indexed by close time) as ``<root>/bars/1d/<symbol>.csv``."""
    folder = root / "bars" / "1d"
    folder.mkdir(parents=True, exist_ok=True)
    table = frame.copy()
    table.insert(0, "date", [t.tz_convert("America/New_York").date() for t in frame.index])
    path = folder / f"{symbol}.csv"
    table.to_csv(path, index=False)
    return path


_WORD = re.compile(r"[a-z_]+")


def _bag(text: str) -> Counter[str]:
    return Counter(_WORD.findall(text.lower()))


@dataclass
class _Item:
    id: str
    family: str
    symbol: str
    situation: str
    lesson: str
    outcome: dict[str, Any]
    decided_at: datetime
    written_at: datetime
    run_id: str | None
    distance: float = 0.0


@dataclass
class FakeMemory:
    """The vector memory's interface over a list: cosine distance of word counts, one
    family per symbol, and nothing written after ``as_of`` recalled."""

    items: list[_Item] = field(default_factory=list)

    def remember(
        self,
        *,
        symbol: str,
        situation: str,
        lesson: str,
        outcome: dict[str, Any],
        decided_at: datetime,
        written_at: datetime,
        run_id: str | None = None,
    ) -> str:
        item_id = f"m{len(self.items) + 1}"
        self.items.append(
            _Item(
                item_id,
                symbol,
                symbol,
                situation,
                lesson,
                dict(outcome),
                decided_at,
                written_at,
                run_id,
            )
        )
        return item_id

    def forget(self) -> None:
        self.items.clear()

    def recall(self, symbol: str, situation: str, *, as_of: datetime, k: int = 2) -> list[_Item]:
        query = _bag(situation)
        found = []
        for item in self.items:
            if item.written_at > as_of or item.family != symbol:
                continue
            other = _bag(item.situation)
            dot = sum(query[w] * other[w] for w in query)
            norm = math.sqrt(
                sum(v * v for v in query.values()) * sum(v * v for v in other.values())
            )
            distance = 1.0 - (dot / norm if norm else 0.0)
            found.append(_Item(**{**item.__dict__, "distance": round(distance, 4)}))
        return sorted(found, key=lambda i: i.distance)[:k]

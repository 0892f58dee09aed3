"""The vector memory on a real persistent ChromaDB store with the offline embedder."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from alphadesk.memory import MemoryUnavailable, SituationMemory, symbol_family

pytestmark = pytest.mark.slow

OVERBOUGHT = "Strong uptrend, RSI 74 overbought, price far above the 50-day average"
BREAKDOWN = "Breakdown below support on heavy volume, MACD negative, downtrend"


def at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(hour=21, tzinfo=UTC)


@pytest.fixture(scope="module")
def embedder() -> Any:
    from alphadesk.memory.embedder import OfflineMiniLM

    return OfflineMiniLM()


@pytest.fixture
def memory(tmp_path: Path, embedder: Any) -> SituationMemory:
    return SituationMemory(tmp_path / "memory", embedder=embedder)


def lesson(memory: SituationMemory, symbol: str, situation: str, decided: str, written: str,
           **outcome: Any) -> str:  # fmt: skip
    return memory.remember(
        symbol=symbol,
        situation=situation,
        lesson=f"{symbol} after '{situation[:20]}': {outcome}",
        outcome=outcome,
        decided_at=at(decided),
        written_at=at(written),
    )


def test_the_embedder_gives_unit_vectors_that_place_paraphrases_close(embedder: Any) -> None:
    vectors = np.array(embedder([
        OVERBOUGHT,
        "The stock is overbought: RSI above 70 in a strong uptrend, stretched above its average",
        "The central bank kept interest rates unchanged and the bond market was quiet",
    ]))  # fmt: skip
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    paraphrase, unrelated = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert paraphrase > 0.6 > unrelated + 0.3


def test_recall_is_closest_first_and_survives_reopening(tmp_path: Path, embedder: Any) -> None:
    first = SituationMemory(tmp_path / "memory", embedder=embedder)
    lesson(first, "AAPL", OVERBOUGHT, "2012-03-01", "2012-03-15", return_pct=-5.2)
    lesson(first, "AAPL", BREAKDOWN, "2012-04-02", "2012-04-16", return_pct=3.1)

    reopened = SituationMemory(tmp_path / "memory", embedder=embedder)
    query = "overbought after a long rally, RSI high"
    found = reopened.recall("AAPL", query, as_of=at("2012-06-01"))
    assert [r.situation for r in found] == [OVERBOUGHT, BREAKDOWN]
    assert found[0].distance < found[1].distance
    assert found[0].outcome == {"return_pct": -5.2} and found[0].decided_at == at("2012-03-01")
    assert reopened.count() == 2


def test_a_lesson_is_recalled_only_once_it_was_written(memory: SituationMemory) -> None:
    lesson(memory, "NVDA", OVERBOUGHT, "2020-01-02", "2020-01-16", return_pct=4.0)
    assert memory.recall("NVDA", OVERBOUGHT, as_of=at("2020-01-15")) == []
    (found,) = memory.recall("NVDA", OVERBOUGHT, as_of=at("2020-01-16"))
    assert found.written_at == at("2020-01-16")


def test_lessons_stay_within_their_symbol_family(memory: SituationMemory) -> None:
    lesson(memory, "GOOGL", OVERBOUGHT, "2010-01-04", "2010-01-19", return_pct=-2.0)
    assert symbol_family("googl") == symbol_family("GOOG") != symbol_family("MSFT")
    (found,) = memory.recall("GOOG", OVERBOUGHT, as_of=at("2010-02-01"))
    assert found.symbol == "GOOGL" and found.family == "GOOG"
    assert memory.recall("MSFT", OVERBOUGHT, as_of=at("2010-02-01")) == []
    assert memory.count("GOOG") == 1 and memory.count("MSFT") == 0


def test_the_same_decision_is_stored_once(memory: SituationMemory) -> None:
    first = lesson(memory, "IBM", BREAKDOWN, "2008-10-01", "2008-10-15", return_pct=-9.0)
    again = lesson(memory, "IBM", BREAKDOWN, "2008-10-01", "2008-10-15", return_pct=-9.0)
    assert first == again and memory.count() == 1


def test_bad_lessons_and_paths_are_clear_errors(tmp_path: Path, memory: SituationMemory) -> None:
    with pytest.raises(ValueError, match="before the decision"):
        lesson(memory, "IBM", BREAKDOWN, "2008-10-15", "2008-10-01")
    with pytest.raises(ValueError, match="timezone-aware"):
        memory.recall("IBM", BREAKDOWN, as_of=datetime(2008, 10, 1))
    assert memory.count() == 0
    a_file = tmp_path / "not-a-folder"
    a_file.write_text("x")
    with pytest.raises(MemoryUnavailable, match="is a file"):
        SituationMemory(a_file).count()


_AT_ONCE = 6  # first opens started together, each round on a store nobody opened yet


def test_first_opens_from_threads_at_once_all_succeed(tmp_path: Path, embedder: Any) -> None:
    for round_ in range(3):
        path = tmp_path / f"memory-{round_}"
        start = threading.Barrier(_AT_ONCE)

        def first_open(index: int, path: Path = path, start: threading.Barrier = start) -> int:
            memory = SituationMemory(path, embedder=embedder)
            start.wait()
            lesson(memory, "NVDA", OVERBOUGHT, f"2024-06-{index + 3:02d}", "2024-06-28")
            return memory.count("NVDA")

        with ThreadPoolExecutor(_AT_ONCE) as pool:
            counts = list(pool.map(first_open, range(_AT_ONCE)))
        assert all(1 <= count <= _AT_ONCE for count in counts), counts
        assert SituationMemory(path, embedder=embedder).count("NVDA") == _AT_ONCE


async def test_first_opens_from_asyncio_tasks_at_once_all_succeed(
    tmp_path: Path, embedder: Any
) -> None:
    """As the desk runs them: each run's memory calls in a thread of its event loop."""
    for round_ in range(3):
        path = tmp_path / f"memory-{round_}"
        memories = [SituationMemory(path, embedder=embedder) for _ in range(_AT_ONCE)]
        counts = await asyncio.gather(*(asyncio.to_thread(m.count) for m in memories))
        assert counts == [0] * _AT_ONCE
        recalled = await asyncio.gather(
            *(
                asyncio.to_thread(m.recall, "NVDA", OVERBOUGHT, as_of=at("2024-07-01"))
                for m in memories
            )
        )
        assert recalled == [[]] * _AT_ONCE

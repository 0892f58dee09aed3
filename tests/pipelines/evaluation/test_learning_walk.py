"""A book that learns: the desk's memory written day by day from the outcomes of the
walk's own decisions, each lesson at the first day that knows its outcome, and recalled
only from then; interrupted, the walk continues to the same bytes."""

from __future__ import annotations

import asyncio
import json
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from alphadesk.config import Settings
from alphadesk.memory import SituationMemory
from alphadesk.pipelines.evaluation.desk_book import DeskBook, evaluate_desk_book
from alphadesk.pipelines.evaluation.journal import JOURNAL
from alphadesk.pipelines.evaluation.stockbench import Protocol
from alphadesk.store import RunStore

pytestmark = pytest.mark.slow

SMALL = Protocol(
    kind="portfolio",
    symbols=("AAPL", "JPM", "PG"),
    start=date(2025, 3, 3),
    end=date(2025, 4, 30),
    commission_bps=15,
)


class Stop(Exception):
    """The interruption: raised from the progress callback mid-walk."""


def _walk(tmp_path: Path, out: Path, **kw: Any) -> DeskBook:
    settings = Settings(data_dir=tmp_path)
    return asyncio.run(evaluate_desk_book(settings, SMALL, every=2, out=out, workers=1, **kw))


def _decisions(folder: Path) -> dict[str, dict[str, Any]]:
    lines = (folder / JOURNAL).read_text().splitlines()[1:]
    return {r["run_id"]: r for r in map(json.loads, lines)}


def test_each_lesson_is_written_the_first_day_that_knows_it_and_recalled_only_then(
    tmp_path: Path,
) -> None:
    book = _walk(tmp_path, tmp_path / "learning", memory=True)
    folder = book.folder
    assert book.manifest["memory"] is True
    decided = _decisions(folder)
    days = sorted({datetime.fromisoformat(r["as_of"]) for r in decided.values()})
    store = RunStore(folder / "store" / "alphadesk.sqlite")
    # the lessons as stored, each recomputed from its decision: its horizon from its run,
    # the day it is written the first of the walk's days on or after the horizon's end
    stored = SituationMemory(folder / "store" / "memory")._open().get(include=["metadatas"])
    lessons = {m["run_id"]: m for m in stored["metadatas"]}
    expected = {}
    for run_id, record in decided.items():
        final = store.get(run_id).result["final"]
        end = datetime.fromisoformat(record["as_of"]) + timedelta(days=final["horizon_days"])
        due = [d for d in days if d >= end]
        if due:
            expected[run_id] = due[0]
    assert expected, "some decision's horizon ended within the walk"
    assert set(lessons) == set(expected)
    for run_id, lesson in lessons.items():
        assert datetime.fromisoformat(lesson["written_at"]) == expected[run_id], run_id
        assert lesson["decided_at"] == datetime.fromisoformat(decided[run_id]["as_of"]).isoformat()
    # each decision recalled only what was written by its instant, and some recalled
    recalled = 0
    for run_id, record in decided.items():
        memories = store.get(run_id).result["memories"]
        recalled += len(memories)
        as_of = datetime.fromisoformat(record["as_of"])
        assert all(datetime.fromisoformat(m["written_at"]) <= as_of for m in memories)
    assert recalled > 0
    # what it learnt changed a decision the same walk without memory makes otherwise
    plain = _decisions(_walk(tmp_path, tmp_path / "plain").folder)
    by_day = {(r["symbol"], r["as_of"]): r["decision"] for r in plain.values()}
    changed = [r for r in decided.values() if by_day[(r["symbol"], r["as_of"])] != r["decision"]]
    assert changed


def test_an_interrupted_learning_walk_continues_to_the_same_bytes(tmp_path: Path) -> None:
    whole = _walk(tmp_path, tmp_path / "whole", memory=True)
    seen: list[object] = []

    def stop_midway(record: object) -> None:
        seen.append(record)
        if len(seen) == len(whole.decisions) // 2:
            raise Stop

    with pytest.raises(Stop):
        _walk(tmp_path, tmp_path / "cut", memory=True, on_decision=stop_midway)
    done = _walk(tmp_path, tmp_path / "cut", memory=True)
    assert done.manifest["resumed"] == len(whole.decisions) // 2
    for name in ("book.json", "book.md"):
        assert (tmp_path / "cut" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()
    fresh = _walk(tmp_path, tmp_path / "cut", memory=True, fresh=True)
    assert fresh.manifest["decided_now"] == len(whole.decisions)
    assert (tmp_path / "cut" / "book.json").read_bytes() == (
        tmp_path / "whole" / "book.json"
    ).read_bytes()


def test_a_journal_of_a_walk_without_memory_is_not_continued_with_it(tmp_path: Path) -> None:
    from alphadesk.pipelines.evaluation import EvaluationError

    folder = tmp_path / "book"
    _walk(tmp_path, folder)
    before = (folder / JOURNAL).read_bytes()
    with pytest.raises(EvaluationError, match="memory"):
        _walk(tmp_path, folder, memory=True)
    assert (folder / JOURNAL).read_bytes() == before

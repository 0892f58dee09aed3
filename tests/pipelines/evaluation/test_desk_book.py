"""The desk as one book: continued from its journal after an interruption, the same
bytes on a rerun, and its weights the plain rule it is labelled with."""

from __future__ import annotations

import asyncio
import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from alphadesk.config import Settings
from alphadesk.pipelines.evaluation.desk_book import (
    DESK_ROW,
    EQUAL_LONGS,
    DeskBook,
    evaluate_desk_book,
)
from alphadesk.pipelines.evaluation.journal import JOURNAL
from alphadesk.pipelines.evaluation.stockbench import Protocol

SMALL = Protocol(symbols=("AAPL", "JPM", "PG"), start=date(2025, 3, 1), end=date(2025, 3, 31))


class Stop(Exception):
    """The interruption: raised from the progress callback mid-walk."""


def _run(tmp_path: Path, out: Path, **kw: Any) -> DeskBook:
    settings = Settings(data_dir=tmp_path)
    return asyncio.run(evaluate_desk_book(settings, SMALL, every=10, out=out, workers=1, **kw))


@pytest.mark.slow
def test_an_interrupted_run_continues_from_its_journal_to_the_same_bytes(tmp_path: Path) -> None:
    whole = _run(tmp_path, tmp_path / "whole")
    assert len(whole.decisions) == 9  # 3 names x 3 decision dates (every 10 of 21 sessions)
    seen: list[object] = []

    def stop_after_four(record: object) -> None:
        seen.append(record)
        if len(seen) == 4:
            raise Stop

    with pytest.raises(Stop):
        _run(tmp_path, tmp_path / "cut", on_decision=stop_after_four)
    lines = (tmp_path / "cut" / JOURNAL).read_text().splitlines()
    assert len(lines) == 1 + 4  # the header and the four decisions made
    resumed: list[int] = []
    done = _run(tmp_path, tmp_path / "cut", on_resume=resumed.append)
    assert resumed == [4]
    assert done.manifest["decided_now"] == 5
    for name in ("book.json", "book.md"):
        assert (tmp_path / "cut" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()
    again = _run(tmp_path, tmp_path / "whole")
    assert again.manifest["decided_now"] == 0
    assert (tmp_path / "whole" / "book.json").read_bytes() == (
        tmp_path / "cut" / "book.json"
    ).read_bytes()


@pytest.mark.slow
def test_the_desk_book_holds_its_longs_in_equal_weights(tmp_path: Path) -> None:
    result = _run(tmp_path, tmp_path / "b")
    payload = json.loads((tmp_path / "b" / "book.json").read_text())
    name = DESK_ROW.format(model="rules", weighting=EQUAL_LONGS.label)
    assert name in payload["nav"]
    first = [r for r in result.decisions if r.as_of == result.decisions[0].as_of]
    longs = [r.symbol for r in first if (r.position or 0) > 0]
    # at the first open: all of the cash in its longs less the 1 bp commission, or all cash
    nav = payload["nav"][name][0]
    assert nav == pytest.approx(100_000 / 1.0001 if longs else 100_000, abs=1e-6)
    assert payload["sessions"][0] == "2025-03-03"
    row = next(r for r in result.rows if r.name == name)
    assert row.source == "ours" and row.excess_low is not None


def test_the_managed_book_weighs_a_day_as_the_funds_manager_does() -> None:
    """Worked by hand: the long budget is 1 less the reserve (0.5 %) and a full turnover's
    cost (1 bp), 0.9949; HOLD C keeps 0.30 cut to the 0.25 cap; SELL B goes to 0; BUY A at
    conviction 0.6 gets 0.6 x (0.9949 - 0.25) = 0.447, cut to the cap."""
    import pandas as pd

    from alphadesk.pipelines.evaluation.book import Session
    from alphadesk.pipelines.evaluation.desk_book import MANAGED
    from alphadesk.pipelines.evaluation.models import DecisionRecord

    at = pd.Timestamp("2025-03-03T21:00:00Z").to_pydatetime()
    decided = [
        DecisionRecord(symbol="A", as_of=at, decision="BUY", conviction=0.6),
        DecisionRecord(symbol="B", as_of=at, decision="SELL", conviction=0.5),
        DecisionRecord(symbol="C", as_of=at, decision="HOLD", conviction=0.5),
    ]
    opens = pd.Series({"A": 10.0, "B": 20.0, "C": 30.0})
    session = Session(i=5, opens=opens, closes=pd.DataFrame(),
                      weights=pd.Series({"A": 0.0, "B": 0.2, "C": 0.3}))  # fmt: skip
    assert MANAGED.weights(decided, session) == pytest.approx({"A": 0.25, "B": 0.0, "C": 0.25})

"""The decisions file: what a killed evaluation leaves is read back whole, a line cut short
is dropped (and decided again), and another evaluation's decisions are never mixed in."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from alphadesk.pipelines.evaluation import DecisionRecord, EvalSpec, EvaluationError
from alphadesk.pipelines.evaluation.deciding import pending
from alphadesk.pipelines.evaluation.journal import JOURNAL, DecisionJournal
from tests.pipelines.conftest import close_of

SPEC = EvalSpec(symbols=["KO", "PEP"], start=date(2010, 1, 4), end=date(2010, 1, 29), every=5)
DATES = [close_of(d) for d in ("2010-01-04", "2010-01-11", "2010-01-19", "2010-01-26")]


def _record(symbol: str, day: int, decision: str = "BUY") -> DecisionRecord:
    return DecisionRecord(symbol=symbol, as_of=DATES[day], decision=decision, model_calls=3)


def test_decisions_appended_are_read_back_and_only_the_rest_are_pending(tmp_path: Path) -> None:
    journal = DecisionJournal.open(tmp_path, SPEC)
    journal.append([_record("KO", 0), _record("KO", 1, "failed")])
    journal.append([_record("PEP", 0, "SELL")])
    journal.close()

    again = DecisionJournal.open(tmp_path, SPEC)
    assert again.recorded[("PEP", DATES[0])].decision == "SELL"
    assert again.recorded[("KO", DATES[0])] == _record("KO", 0)
    # The failed decision is asked again, with every one never made.
    todo = pending(SPEC, DATES, again.recorded)
    assert ("KO", DATES[1]) in todo and ("KO", DATES[0]) not in todo
    assert len(todo) == 2 * len(DATES) - 2


def test_a_line_cut_short_by_a_kill_is_dropped_and_the_next_append_starts_clean(
    tmp_path: Path,
) -> None:
    journal = DecisionJournal.open(tmp_path, SPEC)
    journal.append([_record("KO", 0)])
    journal.close()
    whole = (tmp_path / JOURNAL).read_bytes()
    line = _record("KO", 1).model_dump_json().encode()
    (tmp_path / JOURNAL).write_bytes(whole + line[: len(line) // 2])

    again = DecisionJournal.open(tmp_path, SPEC)
    assert list(again.recorded) == [("KO", DATES[0])]
    again.append([_record("PEP", 2)])
    again.close()
    third = DecisionJournal.open(tmp_path, SPEC)
    assert set(third.recorded) == {("KO", DATES[0]), ("PEP", DATES[2])}


def test_another_evaluations_decisions_are_a_clear_error_and_fresh_discards_them(
    tmp_path: Path,
) -> None:
    journal = DecisionJournal.open(tmp_path, SPEC)
    journal.append([_record("KO", 0)])
    journal.close()
    other = SPEC.model_copy(update={"every": 10})
    with pytest.raises(EvaluationError, match=r"another evaluation \(every: 5 there, 10 asked\)"):
        DecisionJournal.open(tmp_path, other)
    assert (tmp_path / JOURNAL).read_text().count("\n") == 2  # nothing lost
    # Costs are not what the desk is asked: the decisions stand for other costs.
    cheaper = SPEC.model_copy(update={"commission": 0.0, "long_short": True})
    assert len(DecisionJournal.open(tmp_path, cheaper).recorded) == 1
    assert DecisionJournal.open(tmp_path, other, fresh=True).recorded == {}
    assert DecisionJournal.open(tmp_path, other).recorded == {}


def test_a_file_that_is_not_a_decisions_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / JOURNAL).write_text("hello\n")
    with pytest.raises(EvaluationError, match="not an evaluation's decisions file"):
        DecisionJournal.open(tmp_path, SPEC)

"""The triage of a book's names: the desk is asked when something material happened, the
name carries its last decision otherwise, and no call reads past its day."""

from __future__ import annotations

import itertools
import math
from datetime import date, datetime
from typing import Any, cast

import numpy as np
import pytest

from alphadesk.data.base import MarketData
from alphadesk.data.calendar import session_close, sessions_between
from alphadesk.data.errors import DataError
from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.pipelines.evaluation.models import DecisionRecord
from alphadesk.pipelines.evaluation.scope import current_decision
from alphadesk.pipelines.evaluation.triage import TriageRules, carried, triage

NAMES = ("AAPL", "PG", "TRV")
DAYS = [session_close(d) for d in sessions_between(date(2025, 3, 3), date(2025, 3, 31))]


class CutMarket:
    """The bundled data as known at ``cut`` at the latest (a read at a later day answers
    as of ``cut``), every read's instant and its decision's kept in ``reads``."""

    def __init__(self, cut: datetime) -> None:
        self.inner, self.cut = BundledProvider(), cut
        self.reads: list[tuple[datetime, datetime]] = []

    def _at(self, as_of: datetime) -> datetime:
        scope = current_decision()
        assert scope is not None, "a triage read outside a day's scope"
        self.reads.append((as_of, scope.instant))
        return min(as_of, self.cut)

    def daily_bars(self, symbol: str, as_of: datetime, **kw: Any) -> Any:
        return self.inner.daily_bars(symbol, self._at(as_of), **kw)

    def news(self, symbol: str, as_of: datetime, **kw: Any) -> Any:
        return self.inner.news(symbol, self._at(as_of), **kw)

    def filings(self, symbol: str, as_of: datetime, **kw: Any) -> Any:
        return self.inner.filings(symbol, self._at(as_of), **kw)


def _calls(market: Any, rules: TriageRules | None = None) -> list[Any]:
    return triage(cast(MarketData, market), NAMES, DAYS, rules)


def test_no_call_depends_on_data_after_its_day() -> None:
    cut = DAYS[9]
    whole, short = CutMarket(DAYS[-1]), CutMarket(cut)
    everything, until_cut = _calls(whole), _calls(short)
    assert [c for c in everything if c.as_of <= cut] == [c for c in until_cut if c.as_of <= cut]
    assert everything != until_cut  # the cut does change the later days
    assert whole.reads and all(as_of <= day for as_of, day in whole.reads)


def test_a_name_is_decided_first_then_on_what_is_material() -> None:
    calls = _calls(BundledProvider())
    assert len(calls) == len(NAMES) * len(DAYS)
    firsts = [c for c in calls if c.as_of == DAYS[0]]
    assert all(c.ask == "full" and c.reason == "first decision" for c in firsts)
    carried_calls = [c for c in calls if c.ask == "carry"]
    assert carried_calls, "some day of March 2025 had nothing material"
    for call in carried_calls:
        assert call.since is not None and call.since < call.as_of
        assert call.reason.startswith(f"carried: nothing material since {call.since.date()}")
        assert "no news, no filing" in call.reason


def test_the_move_is_measured_in_daily_volatilities() -> None:
    """A carried call's move, recomputed from the closes: |log(close / close then)| over
    the standard deviation of the 20 daily log returns up to the last full decision."""
    market = BundledProvider()
    call = next(c for c in _calls(market) if c.ask == "carry")
    assert call.since is not None
    closes = market.daily_bars(call.symbol, call.as_of).frame["close"]
    then = closes[closes.index <= call.since]
    sigma = np.std(np.diff(np.log(then.to_numpy()[-21:])), ddof=1)
    move = abs(math.log(closes.iloc[-1] / then.iloc[-1])) / sigma
    assert f"move {move:.1f}σ" in call.reason
    assert move <= TriageRules().move


def test_every_name_is_decided_again_after_the_stated_sessions() -> None:
    """With moves never large enough, a name without news is decided every ``every``
    sessions; with every move large enough, on every day."""
    quiet = TriageRules(every=3, move=1e9)
    for symbol in NAMES:
        calls = [c for c in _calls(BundledProvider(), quiet) if c.symbol == symbol]
        asked = [i for i, c in enumerate(calls) if c.ask != "carry"]
        assert all(b - a <= 3 for a, b in itertools.pairwise(asked)), symbol
    restless = _calls(BundledProvider(), TriageRules(move=1e-9))
    assert all(c.ask == "full" for c in restless)


def test_a_carried_decision_is_the_last_one_with_its_reason() -> None:
    call = next(c for c in _calls(BundledProvider()) if c.ask == "carry")
    assert call.since is not None
    last = DecisionRecord(
        symbol=call.symbol, as_of=call.since, decision="BUY", model_calls=21, run_id="r1"
    )
    kept = carried(call, last)
    assert (kept.decision, kept.as_of, kept.model_calls, kept.run_id) == (
        "BUY",
        call.as_of,
        0,
        None,
    )
    assert kept.reason == call.reason


def test_news_alone_asks_for_an_update_and_a_filing_for_the_whole_desk() -> None:
    """Recounted from the data: an update is asked when news (and no filing) came since
    the name's last decision; a filing asks the whole desk."""
    market = BundledProvider()
    calls = _calls(market, TriageRules(every=100, move=1e9))  # only news and filings ask
    by_symbol = {s: [c for c in calls if c.symbol == s] for s in NAMES}
    updates = [c for c in calls if c.ask == "update"]
    assert updates, "March 2025 had news for these names"
    for symbol, mine in by_symbol.items():
        last = mine[0].as_of
        for call in mine[1:]:
            filed = [f for f in _filings(market, symbol, call.as_of) if f.known_at > last]
            window = (call.as_of - last).days + 1
            news = [
                n for n in market.news(symbol, call.as_of, days=window).items if n.known_at > last
            ]
            expected = "full" if filed else "update" if news else "carry"
            assert call.ask == expected, (symbol, call.as_of, call.reason)
            if expected == "update":
                assert (
                    call.reason
                    == f"{len(news)} news item{'s' if len(news) > 1 else ''} since {last.date()}"
                )
            if call.ask != "carry":
                last = call.as_of


def _filings(market: BundledProvider, symbol: str, day: datetime) -> list[Any]:
    try:
        return list(market.filings(symbol, day).items)
    except DataError:  # a name without filings in the data
        return []


def test_bad_thresholds_are_refused() -> None:
    with pytest.raises(ValueError, match="greater than 0"):
        TriageRules(move=0)

"""Chart patterns with their life: a pattern the price has since run through is history,
not a signal, and says when and why it ended; one still in force is reported as current.

Checked against the closes themselves (read from the provider here, not from the tool):
an ended pattern's end date is the first close beyond its invalidation level after its
last point, or the first at its target after confirmation; a standing one has neither.
"""

from __future__ import annotations

from datetime import date

import pandas as pd
from tests.tools.test_chart_tools import call

from alphadesk.analytics.patterns import MAX_AGE_BARS
from alphadesk.data.calendar import session_close
from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.tools.common import adjusted_frame
from alphadesk.tools.deps import ToolDeps

NVDA_FALL = session_close(date(2018, 12, 28))  # close 133.65, weeks after the October rout
NVDA_TOP = session_close(date(2018, 9, 28))


def _closes(bundled: BundledProvider, symbol: str, when: pd.Timestamp) -> pd.Series:
    bars = bundled.daily_bars(symbol, when, start=date(2017, 1, 1))
    close = adjusted_frame(bars)["close"]
    close.index = [d.date() for d in pd.to_datetime(close.index)]
    return close


def _first(closes: pd.Series, after: date, beyond: float, sign: float) -> date | None:
    later = closes[closes.index > after]
    hits = later[sign * (later - beyond) > 0]
    return hits.index[0] if len(hits) else None


async def test_nvda_after_the_fall_reports_no_invalidated_pattern_as_current(
    deps: ToolDeps, bundled: BundledProvider
) -> None:
    data = await call(deps, "detect_chart_patterns", as_of=NVDA_FALL, symbol="NVDA")
    assert data["current_price"] == 133.65
    # The double bottoms whose breakouts (279.10, 263.64) the price fell far below are
    # no longer current: nothing bullish near 280 is presented as standing.
    assert all(p["breakout_level"] < 200 for p in data["patterns"])
    ended = {p["breakout_level"]: p for p in data["ended"]}
    assert {279.1, 263.64} <= set(ended)
    closes = _closes(bundled, "NVDA", NVDA_FALL)
    for p in ended.values():
        assert p["status"] == "confirmed" and p["state"] in ("invalidated", "expired")
        confirmed, ended_on = date.fromisoformat(p["confirmed_date"]), p["ended_date"]
        assert confirmed <= date.fromisoformat(ended_on) <= date(2018, 12, 28)
        invalid = _first(closes, date.fromisoformat(p["end_date"]), p["invalidation"], -1.0)
        reached = _first(closes, confirmed - pd.Timedelta(days=1), p["target"] - 1e-9, 1.0)
        expected = min(d for d in (invalid, reached) if d is not None)
        assert ended_on == expected.isoformat()
        assert p["state"] == ("invalidated" if expected == invalid else "expired")
    assert ended[279.1]["state"] == "invalidated" and ended[279.1]["ended_date"] == "2018-10-10"


async def test_a_standing_pattern_is_still_reported_with_its_points(
    deps: ToolDeps, bundled: BundledProvider
) -> None:
    data = await call(deps, "detect_chart_patterns", as_of=NVDA_TOP, symbol="NVDA")
    assert data["patterns"] and data["patterns_found"] == len(data["patterns"])
    closes = _closes(bundled, "NVDA", NVDA_TOP)
    for p in data["patterns"]:
        assert p["state"] == "standing" and p.get("ended_date") is None
        sign = -1.0 if p["direction"] == "bearish" else 1.0
        end = date.fromisoformat(p["end_date"])
        assert _first(closes, end, p["invalidation"], -sign) is None
        if p.get("confirmed_date") is not None:
            since = closes[closes.index >= date.fromisoformat(p["confirmed_date"])]
            assert not (sign * (since - p["target"]) >= 0).any()
            assert len(since) - 1 <= MAX_AGE_BARS
        points = [date.fromisoformat(x["date"]) for x in p["points"]]
        assert points and points == sorted(points)
        assert date.fromisoformat(p["start_date"]) == points[0] <= end
    names = {p["name"] for p in data["patterns"]}
    assert "inverse_head_and_shoulders" in names  # confirmed 2018-08-07, target not reached

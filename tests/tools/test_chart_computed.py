"""Indicators, levels and patterns computed once per symbol, instant and bars: the agents
and validators of one decision share them, and nothing is shared past what was read."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from alphadesk.agent import RunContext
from alphadesk.analytics import indicator_snapshot, support_resistance
from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.data.providers.local import LocalProvider
from alphadesk.pipelines.evaluation.lookahead import guard
from alphadesk.pipelines.evaluation.scope import LookAheadError, decision
from alphadesk.tools.chart import levels, signals
from alphadesk.tools.chart.levels import find_support_resistance
from alphadesk.tools.chart.signals import get_technical_indicators
from alphadesk.tools.deps import ToolDeps

FRIDAY = datetime(2012, 6, 29, 21, tzinfo=UTC)
NEXT_FRIDAY = datetime(2012, 7, 6, 21, tzinfo=UTC)
SYMBOL = "AAPL"


def ctx(deps: ToolDeps, as_of: datetime) -> RunContext[ToolDeps]:
    return RunContext(deps=deps, as_of=as_of, run_id="computed", agent="test")


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often the real indicator snapshot and level set are computed."""
    calls: Counter[str] = Counter()

    def counting(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def compute(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(*args, **kwargs)

        return compute

    monkeypatch.setattr(signals, "indicator_snapshot", counting("snapshot", indicator_snapshot))
    monkeypatch.setattr(levels, "support_resistance", counting("levels", support_resistance))
    return calls


async def test_a_second_reader_of_the_same_bars_gets_the_same_numbers_uncomputed(
    deps: ToolDeps, counted: Counter[str]
) -> None:
    first = await get_technical_indicators.function(ctx(deps, FRIDAY), SYMBOL)
    again = await get_technical_indicators.function(ctx(deps, FRIDAY), SYMBOL)
    assert again == first and first.rsi_14 is not None
    sr_first = await find_support_resistance.function(ctx(deps, FRIDAY), SYMBOL)
    sr_again = await find_support_resistance.function(ctx(deps, FRIDAY), SYMBOL)
    assert sr_again == sr_first and sr_first.support
    assert counted == {"snapshot": 1, "levels": 1}


async def test_another_instant_is_computed_on_its_own_bars(
    deps: ToolDeps, counted: Counter[str]
) -> None:
    friday = await get_technical_indicators.function(ctx(deps, FRIDAY), SYMBOL)
    later = await get_technical_indicators.function(ctx(deps, NEXT_FRIDAY), SYMBOL)
    assert counted["snapshot"] == 2
    assert (friday.last_date, later.last_date) == (FRIDAY.date(), NEXT_FRIDAY.date())
    assert later.current_price != friday.current_price


async def test_other_bars_at_the_same_instant_are_computed_again(
    bundled: BundledProvider, tmp_path: Path, counted: Counter[str]
) -> None:
    """A local file with the same symbol, instant and dates but other prices is not
    answered with the bundled data's numbers."""
    real = bundled.daily_bars(SYMBOL, FRIDAY).frame
    folder = tmp_path / "local" / "bars" / "1d"
    folder.mkdir(parents=True)
    doubled = real[["open", "high", "low", "close", "volume"]].copy()
    doubled[["open", "high", "low", "close"]] *= 2
    doubled.insert(0, "date", [t.tz_convert("America/New_York").date() for t in real.index])
    doubled.to_csv(folder / f"{SYMBOL}.csv", index=False)
    local = ToolDeps(market=LocalProvider(tmp_path / "local"), run_dir=None)
    plain = await get_technical_indicators.function(ctx(ToolDeps(market=bundled), FRIDAY), SYMBOL)
    twice = await get_technical_indicators.function(ctx(local, FRIDAY), SYMBOL)
    assert counted["snapshot"] == 2
    assert plain.sma_20 is not None and twice.sma_20 is not None
    assert twice.sma_20 == pytest.approx(2 * plain.sma_20, abs=0.011)


async def test_a_computed_answer_never_skips_the_look_ahead_check(
    bundled: BundledProvider,
) -> None:
    """Computed while deciding at the later instant, the indicators are still refused to a
    decision at the earlier one that asks for them."""
    deps = ToolDeps(market=guard(bundled))
    with decision(SYMBOL, NEXT_FRIDAY):
        await get_technical_indicators.function(ctx(deps, NEXT_FRIDAY), SYMBOL)
    with pytest.raises(LookAheadError), decision(SYMBOL, FRIDAY):
        await get_technical_indicators.function(ctx(deps, NEXT_FRIDAY), SYMBOL)


def test_the_frame_fingerprint_sees_one_changed_value(bundled: BundledProvider) -> None:
    from alphadesk.tools.chart.series import ChartSeries

    bars = bundled.daily_bars(SYMBOL, FRIDAY)
    frame = bars.frame[["open", "high", "low", "close", "volume"]].astype(float)
    changed = frame.copy()
    changed.iloc[10, 3] += 0.01
    start = frame.index[0].date()
    same = ChartSeries(bars, frame.copy(), "1y", start, FRIDAY)
    assert ChartSeries(bars, frame, "1y", start, FRIDAY).digest == same.digest
    assert ChartSeries(bars, changed, "1y", start, FRIDAY).digest != same.digest

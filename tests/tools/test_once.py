"""A tool asked again within one step (same dependencies, run, instant and arguments) is
answered from memory with a copy; anything else, an error, or a read the look-ahead guard
refuses is not."""

from __future__ import annotations

import gc
import weakref
from datetime import UTC, datetime

import pytest
from pydantic import BaseModel

from alphadesk.agent import RunContext
from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.pipelines.evaluation.lookahead import guard
from alphadesk.pipelines.evaluation.scope import LookAheadError, decision
from alphadesk.tools.deps import ToolDeps
from alphadesk.tools.once import once_per_step

FRIDAY = datetime(2012, 6, 29, 21, tzinfo=UTC)
NEXT_FRIDAY = datetime(2012, 7, 6, 21, tzinfo=UTC)

computed: list[tuple[str, datetime]] = []


class Closes(BaseModel):
    close: float
    days: int
    last: list[float]


@once_per_step
async def last_close(ctx: RunContext[ToolDeps], symbol: str, days: int = 30) -> Closes:
    """The last close of ``symbol``, read from the market at the run's instant."""
    computed.append((symbol, ctx.as_of))
    if symbol == "NOPE":
        raise ValueError("no such symbol")
    prices = ctx.deps.market.daily_bars(symbol, ctx.as_of).prices()
    return Closes(close=float(prices.iloc[-1]), days=days, last=prices.iloc[-3:].tolist())


def _ctx(deps: ToolDeps, as_of: datetime = FRIDAY, run_id: str = "r1") -> RunContext[ToolDeps]:
    return RunContext(deps=deps, as_of=as_of, run_id=run_id, agent="market")


@pytest.fixture(autouse=True)
def _fresh() -> None:
    computed.clear()


async def test_the_same_question_in_one_step_is_answered_once(bundled: BundledProvider) -> None:
    deps = ToolDeps(market=bundled)
    first = await last_close(_ctx(deps), "AAPL")
    again = await last_close(_ctx(deps), symbol="AAPL", days=30)  # the same call, spelled out
    assert again == first and again is not first and computed == [("AAPL", FRIDAY)]
    kept = first.model_copy(deep=True)
    first.last.append(-1.0)  # a receiver changing its answer changes nobody else's
    again.close, again.last[0] = -1.0, -1.0
    assert (await last_close(_ctx(deps), "AAPL")) == kept


async def test_another_step_instant_run_or_argument_is_computed_again(
    bundled: BundledProvider,
) -> None:
    deps = ToolDeps(market=bundled)
    await last_close(_ctx(deps), "AAPL")
    later = await last_close(_ctx(deps, NEXT_FRIDAY), "AAPL")
    await last_close(_ctx(deps, run_id="r2"), "AAPL")
    await last_close(_ctx(ToolDeps(market=bundled)), "AAPL")  # another step's deps
    await last_close(_ctx(deps), "AAPL", 60)
    assert len(computed) == 5 and later.close != (await last_close(_ctx(deps), "AAPL")).close


async def test_an_error_is_not_kept(bundled: BundledProvider) -> None:
    deps = ToolDeps(market=bundled)
    for _ in range(2):
        with pytest.raises(ValueError, match="no such symbol"):
            await last_close(_ctx(deps), "NOPE")
    assert computed == [("NOPE", FRIDAY)] * 2


async def test_a_kept_answer_is_refused_past_the_decision_in_progress(
    bundled: BundledProvider,
) -> None:
    deps = ToolDeps(market=guard(bundled))
    with decision("AAPL", NEXT_FRIDAY):
        await last_close(_ctx(deps, NEXT_FRIDAY), "AAPL")
    with pytest.raises(LookAheadError), decision("AAPL", FRIDAY):
        await last_close(_ctx(deps, NEXT_FRIDAY), "AAPL")
    assert computed == [("AAPL", NEXT_FRIDAY)]  # refused before anything was handed out


async def test_a_call_outside_a_run_is_computed_each_time(bundled: BundledProvider) -> None:
    class Outside:  # what a script or a test hands a tool: dependencies and an instant
        deps = ToolDeps(market=bundled)
        as_of = FRIDAY

    await last_close(Outside(), "AAPL")  # type: ignore[arg-type]
    await last_close(Outside(), "AAPL")  # type: ignore[arg-type]
    assert computed == [("AAPL", FRIDAY)] * 2


async def test_a_kept_answer_keeps_no_step_alive(bundled: BundledProvider) -> None:
    deps = ToolDeps(market=bundled)
    await last_close(_ctx(deps), "AAPL")
    step = weakref.ref(deps)
    del deps
    gc.collect()
    assert step() is None  # a finished run's dependencies (recorder, ledger) are freed

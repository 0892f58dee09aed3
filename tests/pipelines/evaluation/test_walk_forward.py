"""A walk forward of the rules trading desk: repeatable to the byte, replayed without a model
call, and a desk that reads past its decision instant is caught."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable, Mapping
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph

from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.llm.base import Model
from alphadesk.pipelines.base import Nodes, PipelineRun
from alphadesk.pipelines.desk.models import DeskRequest, DeskResult
from alphadesk.pipelines.evaluation import EvalSpec, LookAheadError, evaluate
from alphadesk.pipelines.evaluation.files import TABLE_FILES
from alphadesk.store import RunStore
from tests.support.counting import Counted

# Two decisions on IBM (the first two sessions of 2011 ten sessions apart).
SPEC = EvalSpec(symbols=["IBM"], start=date(2011, 1, 3), end=date(2011, 1, 31), every=10)


def _run(settings: Settings, spec: EvalSpec, **kwargs: Any) -> Any:
    return asyncio.run(evaluate(settings, spec, **kwargs))


@pytest.mark.slow
def test_the_same_evaluation_again_continues_and_a_fresh_one_replays_with_no_model_call(
    tmp_path: Path,
) -> None:
    settings = Settings(data_dir=tmp_path)
    counters: list[Counted] = []

    def counted(_agent: str, model: Model) -> Model:
        counters.append(Counted(model))
        return counters[-1]

    first = _run(settings, SPEC, wrap_model=counted)
    live_first = sum(c.calls for c in counters)
    tables = {name: (first.folder / name).read_bytes() for name in TABLE_FILES}
    charts = {name: (first.folder / name).read_bytes() for name in ("equity.png", "drawdown.png")}
    counters.clear()

    # Run again, it continues from the recorded decisions: nothing left to decide.
    again = asyncio.run(evaluate(settings, SPEC, wrap_model=counted))
    assert again.manifest["decided_now"] == 0 and again.manifest["resumed"] == 2
    assert again.manifest["run_ids"] == first.manifest["run_ids"]
    # Fresh, it decides again, every answer replayed from the response cache.
    second = _run(settings, SPEC, wrap_model=counted, fresh=True)

    assert first.folder == second.folder == tmp_path / "evals" / SPEC.name
    # A stopped decision is asked again whole: its run kept no checkpoint file to resume.
    assert not (first.folder / "store" / "checkpoints").exists()
    assert live_first > 0 and sum(c.calls for c in counters) == 0
    assert first.manifest["cache_mode"] == "record" and second.manifest["cache_mode"] == "replay"
    assert first.manifest["live_model_calls"] == live_first
    assert second.manifest["live_model_calls"] == 0
    assert second.manifest["decided_now"] == 2
    # The ledger agrees: every request of the second evaluation's runs was a cache hit.
    store = RunStore(second.folder / "store" / "alphadesk.sqlite")
    ledger = [e for run in second.manifest["run_ids"] for e in store.ledger(run)]
    assert ledger and not [e for e in ledger if not e["cached"]]
    assert len(second.manifest["run_ids"]) == 2
    assert set(second.manifest["run_ids"]).isdisjoint(first.manifest["run_ids"])
    for done in (again, second):
        for name, before in tables.items():
            assert (done.folder / name).read_bytes() == before, name
        for name, before in charts.items():
            assert (done.folder / name).read_bytes() == before, name
    # The table holds the desk beside every baseline, per symbol and pooled, with the
    # decisions' model calls (the same whether answered live or replayed).
    rows = second.rows
    assert [(r["strategy"], r["symbol"]) for r in rows[:6]] == [
        ("desk", "IBM"),
        ("buy_hold", "IBM"),
        ("sma_cross", "IBM"),
        ("macd", "IBM"),
        ("kdj_rsi", "IBM"),
        ("zmr", "IBM"),
    ]
    assert {r["symbol"] for r in rows[6:]} == {"pooled"}
    assert rows[0]["decisions"] == 2 and rows[0]["model_calls"] == live_first
    text = (second.folder / "table.md").read_text()
    assert "run" not in text.lower().replace("return", "")  # no run ids, no times


class _PeekingDesk:
    """A desk that reads next month's bars (and, if told to, hides the error it gets)."""

    kind = "desk"
    request_type = DeskRequest
    result_type = DeskResult
    model_label = "rules"

    def __init__(self, market: MarketData, *, swallow: bool) -> None:
        self.market, self.swallow = market, swallow

    def title(self, request: DeskRequest) -> str:
        return f"peek {request.symbol}"

    def report(self, result: DeskResult) -> str:
        return result.decision

    @staticmethod
    def graph_shape(request: DeskRequest) -> Hashable:
        return ()

    @staticmethod
    def graph(request: DeskRequest, node: Nodes) -> StateGraph[Any]:
        graph = StateGraph(dict)
        graph.add_node("decide", node("decide"))
        graph.add_edge(START, "decide")
        graph.add_edge("decide", END)
        return graph

    def nodes(self, request: DeskRequest, run: PipelineRun) -> Nodes:
        async def decide(state: dict[str, Any]) -> dict[str, Any]:
            return {"result": (await self.decide(request)).model_dump(mode="json")}

        return lambda _name: decide

    async def decide(self, request: DeskRequest) -> DeskResult:
        later = request.as_of + timedelta(days=30)
        try:
            bars = await asyncio.to_thread(self.market.daily_bars, request.symbol, later)
        except LookAheadError:
            if not self.swallow:
                raise
            return DeskResult(symbol=request.symbol, as_of=request.as_of, decision="HOLD")
        rising = bars.prices().iloc[-1] > bars.upto(request.as_of).prices().iloc[-1]
        decision = "BUY" if rising else "SELL"
        return DeskResult(symbol=request.symbol, as_of=request.as_of, decision=decision)


@pytest.mark.parametrize("swallow", [False, True], ids=["raised", "swallowed"])
def test_a_desk_that_reads_past_its_date_fails_the_evaluation(
    tmp_path: Path, swallow: bool
) -> None:
    def peeking(_s: Settings, market: MarketData, _m: Mapping[str, Model]) -> Any:
        return _PeekingDesk(market, swallow=swallow)

    with pytest.raises(LookAheadError, match="look-ahead: daily bars of IBM as of 2011-02"):
        _run(Settings(data_dir=tmp_path), SPEC, desk_factory=peeking)
    assert not (tmp_path / "evals" / SPEC.name / "table.md").exists()


@pytest.mark.slow
def test_reads_at_the_decision_instant_pass_the_guard(tmp_path: Path) -> None:
    class Honest(_PeekingDesk):
        async def decide(self, request: DeskRequest) -> DeskResult:
            await asyncio.to_thread(self.market.daily_bars, request.symbol, request.as_of)
            return DeskResult(symbol=request.symbol, as_of=request.as_of, decision="BUY")

    def honest(_s: Settings, market: MarketData, _m: Mapping[str, Model]) -> Any:
        return Honest(market, swallow=False)

    done = _run(Settings(data_dir=tmp_path), SPEC, desk_factory=honest)
    assert [r.decision for r in done.decisions] == ["BUY", "BUY"]
    desk, buy_hold = done.rows[0], done.rows[1]
    # Long from the first decision's close, as buy & hold is: the same curve.
    assert desk["final_value"] == buy_hold["final_value"]

"""The fund on the bundled data, offline: the desks on every name (each a recorded desk
run), the manager's targets within the limits and the cash, the orders that reach them
and the cash after, checked here by replaying the orders; resumed after the desks, and
replayed to the same decision; a manager that keeps breaking the limits fails the run
naming the violations, and nothing of its answer is taken."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest

from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.data.errors import DataError
from alphadesk.llm.messages import Message
from alphadesk.llm.testing import FunctionModel
from alphadesk.pipelines.fund.book import fund_request
from alphadesk.pipelines.fund.models import FundResult
from alphadesk.pipelines.fund.pipeline import Fund
from alphadesk.pipelines.fund.report import render_report
from alphadesk.pipelines.runner import PipelineRunner, replay
from alphadesk.portfolio import Contract, OrderRequest, PaperPortfolio
from alphadesk.portfolio.targets import check_targets
from alphadesk.store import RunStore
from tests.pipelines.conftest import close_of

SYMBOLS = ["AAPL", "JPM", "PG"]
DAY = "2025-05-15"


def _request(settings: Settings, market: MarketData, account: str = "paper") -> Any:
    return fund_request(
        market, settings.store_path, close_of(DAY), symbols=SYMBOLS, account=account
    )


def _run(settings: Settings, market: MarketData, request: Any, **kwargs: Any) -> FundResult:
    fund = Fund(settings, market, model="rules", models=kwargs.pop("models", None))
    result = asyncio.run(PipelineRunner(settings, fund).analyze(request, **kwargs))
    assert result is not None
    return result


def test_an_empty_account_is_rebalanced_within_the_limits_and_the_cash(
    settings: Settings, market: MarketData
) -> None:
    request = _request(settings, market)
    assert request.book.cash == 100_000.0 and request.book.holdings == []
    assert request.book.notes == ["account paper had no order by 2025-05-15: the book is "
                                  "$100,000.00 of cash"]  # fmt: skip
    result = _run(settings, market, request)
    assert result.decision in ("rebalance", "hold")
    assert [d.symbol for d in result.desks] == SYMBOLS
    store = RunStore(settings.store_path)
    for desk in result.desks:
        assert desk.run_id is not None and store.get(desk.run_id).kind == "desk"
        assert desk.decision == store.get(desk.run_id).status
    assert store.get(result.run_id or "").kind == "fund"
    prices = {t.symbol: t.price for t in result.targets}
    targets = {t.symbol: t.target for t in result.targets}
    assert check_targets(targets, {}, 100_000.0, prices, request.limits) == []
    # The orders, replayed here: the cash never goes below 0, no name above the cap.
    cash, shares = 100_000.0, dict.fromkeys(SYMBOLS, 0.0)
    for order in result.orders:
        signed = order.quantity if order.side == "buy" else -order.quantity
        shares[order.contract.symbol] += signed
        cash -= signed * order.price + order.fees
        assert cash >= 0 and order.quantity == int(order.quantity)
        assert order.price == prices[order.contract.symbol]
        assert order.fees == pytest.approx(order.quantity * order.price * 1e-4)
    assert result.cash_after == pytest.approx(cash)
    for line in result.targets:
        assert line.after == pytest.approx(shares[line.symbol] * line.price / 100_000.0)
        assert line.after <= min(line.target, request.limits.max_weight) + 1e-12
    by_desk = {d.symbol: d.decision for d in result.desks}
    for line in result.targets:
        if by_desk[line.symbol] in ("SELL", "HOLD"):  # nothing held: nothing to keep
            assert line.target == 0.0
    report = render_report(result)
    assert "## Weights" in report and "## What each analyst missed" in report
    assert f"Cash after: ${cash:,.2f}" in report


def test_a_held_book_is_read_at_the_instant_and_its_holds_are_kept(
    settings: Settings, market: MarketData
) -> None:
    book = PaperPortfolio(settings.store_path)
    book.open_account("fund", 50_000.0)
    bought = OrderRequest(contract=Contract(symbol="AAPL"), side="buy", quantity=40,
                          price=211.45, as_of=close_of(DAY))  # fmt: skip
    later = bought.model_copy(update={"as_of": close_of("2025-05-16"), "price": 211.26})
    book.place(bought, "fund")
    book.place(later, "fund")  # after the instant: not in the book
    request = _request(settings, market, account="fund")
    assert request.book.shares == {"AAPL": 40.0}
    assert request.book.cash == pytest.approx(50_000.0 - 40 * 211.45)
    result = _run(settings, market, request)
    aapl = next(t for t in result.targets if t.symbol == "AAPL")
    assert aapl.shares == 40 and result.nav == pytest.approx(50_000.0)
    assert aapl.weight == pytest.approx(40 * 211.45 / 50_000.0)
    decision = next(d.decision for d in result.desks if d.symbol == "AAPL")
    if decision == "HOLD":
        assert aapl.target == pytest.approx(aapl.weight)
        assert all(o.contract.symbol != "AAPL" for o in result.orders)


def test_a_book_holding_a_name_without_a_price_is_refused_before_any_desk_runs(
    settings: Settings, market: MarketData
) -> None:
    book = PaperPortfolio(settings.store_path)
    book.open_account("old", 10_000.0)
    ko = OrderRequest(contract=Contract(symbol="KO"), side="buy", quantity=10,
                      price=37.502, as_of=close_of("2018-06-29"))  # fmt: skip
    book.place(ko, "old")  # the bundled KO closes end in 2022: no price in 2025
    with pytest.raises(DataError, match="holds 10 KO, which has no price at 2025-05-15"):
        _request(settings, market, account="old")
    assert RunStore(settings.store_path).recent(kind="desk") == []


def test_a_run_stopped_after_its_desks_resumes_without_asking_them_again(
    settings: Settings, market: MarketData
) -> None:
    request = _request(settings, market)
    fund = Fund(settings, market, model="rules")
    runner = PipelineRunner(settings, fund)
    stopped = asyncio.run(runner.analyze(request, interrupt_after=["desks"]))
    assert stopped is None
    store = RunStore(settings.store_path)
    (run,) = store.recent(kind="fund")
    desks = len(store.recent(kind="desk"))
    assert desks == len(SYMBOLS)
    resumed = asyncio.run(runner.analyze(request, resume_run_id=run.id))
    assert resumed is not None and resumed.run_id == run.id
    assert len(store.recent(kind="desk")) == desks
    again, same = asyncio.run(replay(settings, market, run.id))
    assert same and again.decided() == resumed.decided()


def _violating(messages: Sequence[Message], *_: Any) -> str:
    targets = [{"symbol": s, "weight": 0.5, "reason": "all in"} for s in SYMBOLS]
    return json.dumps({"targets": targets, "rationale": "everything"})


def test_a_manager_that_keeps_breaking_the_limits_fails_the_run_naming_them(
    settings: Settings, market: MarketData
) -> None:
    manager = FunctionModel(_violating, name="scripted")
    result = _run(settings, market, _request(settings, market),
                  models={"portfolio_manager": manager})  # fmt: skip
    assert result.decision == "failed" and result.stage == "portfolio_manager"
    assert "AAPL: weight 0.5000 is above the cap of 0.2500 per name" in (result.reason or "")
    assert result.orders == [] and result.targets == [] and result.cash_after is None
    assert len(manager.requests) == 3  # the first answer and two retries, each told why
    assert "Failed at portfolio_manager" in render_report(result)


@pytest.mark.slow  # worker processes
def test_desks_in_worker_processes_decide_as_in_this_process(
    settings: Settings, market: MarketData
) -> None:
    request = _request(settings, market)
    here = _run(settings, market, request)
    fund = Fund(settings, market, model="rules", workers=2)
    fund.pool = fund.desk_runs().started(len(SYMBOLS))  # None when this process cannot fork
    try:
        there = asyncio.run(PipelineRunner(settings, fund).analyze(request))
    finally:
        if fund.pool is not None:
            fund.pool.shutdown(wait=True)
    assert there is not None and there.decided() == here.decided()
    store = RunStore(settings.store_path)
    assert all(store.get(d.run_id or "").kind == "desk" for d in there.desks)

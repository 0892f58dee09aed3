"""The fund's graph nodes: the desks on every name, the portfolio manager, the result.

Nodes read and write the typed state (``FundState``); the graph keeps it as JSON,
converted at each node by ``FUND_STATE``. The prices are the closes at the request's
instant (point in time), read once in the manager's node: the orders are priced at them.
"""

from __future__ import annotations

import asyncio
import operator
from dataclasses import dataclass
from typing import Annotated

from typing_extensions import TypedDict  # pydantic reads a TypedDict of it on Python 3.11

from alphadesk.agents.fund import PORTFOLIO_MANAGER, DeskCall, FundDeps, FundTask, Holding
from alphadesk.agents.fund.models import PortfolioDecision
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.data.errors import DataError
from alphadesk.pipelines.agent_steps import AgentSteps
from alphadesk.pipelines.base import NodeFunction, PipelineRun, StateCodec
from alphadesk.pipelines.desk.models import DeskRequest
from alphadesk.pipelines.events import StepFinished, StepStarted
from alphadesk.pipelines.fund.desks import DeskRuns
from alphadesk.pipelines.fund.models import DeskLine, FundRequest, FundResult, TargetLine
from alphadesk.pipelines.models import AgentReport, Failure
from alphadesk.portfolio.targets import nav_of, orders_for_targets

__all__ = ["FUND_STATE", "FundNodeDeps", "FundNodes", "FundState"]


class FundState(TypedDict, total=False):
    """Graph state, typed; the graph keeps it as JSON (``FUND_STATE``)."""

    request: FundRequest
    desks: list[DeskLine]
    prices: dict[str, float]
    decision: PortfolioDecision
    verdict: Failure
    reports: Annotated[list[AgentReport], operator.add]
    missing: Annotated[list[str], operator.add]
    result: FundResult


FUND_STATE = StateCodec(FundState)


@dataclass(frozen=True)
class FundNodeDeps:
    """What one run's nodes need: the settings (each desk's defaults), the market, where
    the desks run, the agent steps bound to the run, and the run."""

    settings: Settings
    market: MarketData
    desks: DeskRuns
    desk_model: str  # the desks' models, as the step events name them
    steps: AgentSteps
    run: PipelineRun


@dataclass(frozen=True)
class FundNodes:
    """The graph's nodes for one request, bound to their dependencies."""

    deps: FundNodeDeps
    request: FundRequest

    def node(self, name: str) -> NodeFunction:
        return FUND_STATE.node(getattr(self, name))

    def _announce(self, symbol: str, line: DeskLine | None = None) -> None:
        run = self.deps.run
        if line is None:
            model = self.deps.desk_model
            run.emit(StepStarted(run_id=run.run_id, agent="desk", symbol=symbol, model=model))
            return
        status = "failed" if line.decision == "failed" else "completed"
        said = line.reason if line.decision == "failed" else line.decision
        run.emit(StepFinished(run_id=run.run_id, agent="desk", symbol=symbol, status=status,
                              reason=said))  # fmt: skip

    async def desks(self, state: FundState) -> FundState:
        """The trading desk on every name, as one recorded desk run each."""
        request = self.request
        asked = [
            DeskRequest.from_settings(
                self.deps.settings, symbol=symbol, as_of=request.as_of, depth=request.depth
            )
            for symbol in request.symbols
        ]
        for one in asked:
            self._announce(one.symbol)
        lines = await self.deps.desks.run(asked, lambda line: self._announce(line.symbol, line))
        order = {symbol: i for i, symbol in enumerate(request.symbols)}
        return {"desks": sorted(lines, key=lambda line: order[line.symbol]), "missing": []}

    async def manager(self, state: FundState) -> FundState:
        """The portfolio manager's targets, checked against the limits and the cash."""
        request, book = self.request, self.request.book
        held = book.shares
        try:
            prices = await asyncio.to_thread(self._prices, [*request.symbols, *held])
        except DataError as exc:
            failure = f"prices at {request.as_of:%Y-%m-%d}: {exc}"
            return {"verdict": Failure(stage="prices", reason=failure), "missing": []}
        nav = nav_of(book.cash, held, prices)
        task = FundTask(
            as_of=request.as_of,
            desks=[_call(line, prices[line.symbol]) for line in state["desks"]],
            holdings=[
                Holding(symbol=s, shares=q, price=prices[s], weight=q * prices[s] / nav)
                for s, q in held.items()
            ],
            cash=book.cash,
            nav=nav,
            limits=request.limits,
        )
        deps = FundDeps(held, book.cash, prices, request.limits, tuple(request.symbols))
        step = await self.deps.steps.run(PORTFOLIO_MANAGER, task, deps, request)
        update: FundState = {"prices": prices, "missing": step.missing}
        if step.report is not None:
            update["reports"] = [step.report]
        if step.failure is not None:
            update["verdict"] = Failure(stage=step.agent, reason=step.failure)
        elif step.output is not None:
            update["decision"] = step.output
        return update

    def _prices(self, symbols: list[str]) -> dict[str, float]:
        """The close of each symbol at the request's instant."""
        market, as_of = self.deps.market, self.request.as_of
        return {s: market.quote(s, as_of).price for s in dict.fromkeys(symbols)}

    async def finish(self, state: FundState) -> FundState:
        request = self.request
        result = FundResult(
            symbol=request.symbol,
            as_of=request.as_of,
            decision="failed",
            symbols=request.symbols,
            book=request.book,
            limits=request.limits,
            desks=state.get("desks", []),
            agents=[d.report for d in state.get("desks", []) if d.report is not None]
            + state.get("reports", []),
            data_missing=sorted(set(state.get("missing", []))),
            run_id=self.deps.run.run_id,
        )
        verdict, decision = state.get("verdict"), state.get("decision")
        if verdict is not None or decision is None:
            stage = verdict.stage if verdict else "portfolio_manager"
            reason = verdict.reason if verdict else "no targets reached"
            return {"result": result.model_copy(update={"stage": stage, "reason": reason})}
        return {"result": _rebalanced(result, decision, state["prices"], request)}


def _call(line: DeskLine, price: float) -> DeskCall:
    said = line.rationale if line.decision != "failed" else (line.reason or "")
    return DeskCall(
        symbol=line.symbol,
        decision=line.decision,
        conviction=line.conviction,
        size_fraction=line.size_fraction,
        rationale=said,
        price=price,
        run_id=line.run_id,
    )


def _rebalanced(
    result: FundResult, decision: PortfolioDecision, prices: dict[str, float], request: FundRequest
) -> FundResult:
    """The result with the targets, the orders that reach them and the cash after."""
    book = request.book
    held = book.shares
    nav = nav_of(book.cash, held, prices)
    orders = orders_for_targets(
        decision.targets,
        held,
        book.cash,
        prices,
        request.limits,
        as_of=request.as_of,
        source=f"fund run {result.run_id}",
    )
    after = dict(held)
    for order in orders:
        signed = order.quantity if order.side == "buy" else -order.quantity
        after[order.contract.symbol] = after.get(order.contract.symbol, 0.0) + signed
    lines = [
        TargetLine(
            symbol=t.symbol,
            price=prices[t.symbol],
            shares=held.get(t.symbol, 0.0),
            weight=held.get(t.symbol, 0.0) * prices[t.symbol] / nav,
            target=t.weight,
            after=after.get(t.symbol, 0.0) * prices[t.symbol] / nav,
            reason=t.reason,
        )
        for t in decision.targets
    ]
    costs = sum(o.fees for o in orders)
    return result.model_copy(
        update={
            "decision": "rebalance" if orders else "hold",
            "nav": nav,
            "targets": lines,
            "rationale": decision.rationale,
            "orders": orders,
            "costs": costs,
            "cash_after": book.cash + sum(o.cash_change for o in orders),
        }
    )

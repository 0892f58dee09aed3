"""The paper order a desk's recorded decision stands for (``portfolio follow``): a CSP run
sells its put, a trading-desk run buys or sells the stock at the judge's entry. It reads
the desks' result models, so it sits one tier above them; placing the order is the paper
account's (:mod:`alphadesk.portfolio`)."""

from __future__ import annotations

from collections.abc import Callable

from alphadesk.data.base import MarketData
from alphadesk.portfolio import Contract, Order, OrderRequest, PaperPortfolio, verify_price
from alphadesk.portfolio.placing import place
from alphadesk.store import RunRecord, RunStore

__all__ = ["follow_run", "orders_from_run"]


def _from_csp(run: RunRecord, contracts: int | None) -> list[OrderRequest]:
    from alphadesk.pipelines.csp.models import CspResult

    assert run.result is not None
    result = CspResult.model_validate(run.result)
    if result.synthesis is None:
        raise ValueError(
            f"run {run.id} decided {result.decision} ({result.reason}): there is no position "
            "to open"
        )
    put = result.synthesis.suggested_position
    order = OrderRequest(
        contract=Contract(
            symbol=put.symbol, right="put", strike=put.strike, expiration=put.expiration
        ),
        side="sell",
        quantity=contracts or 1,
        price=put.premium,
        as_of=result.as_of,
        source=f"csp run {run.id}",
        note=f"sell to open: {result.synthesis.rationale[:200]}",
    )
    return [order]


def _from_trading(run: RunRecord, shares: int | None) -> list[OrderRequest]:
    from alphadesk.pipelines.desk.models import DeskResult

    assert run.result is not None
    result = DeskResult.model_validate(run.result)
    final = result.final
    if final is None or final.action == "HOLD" or final.entry is None:
        raise ValueError(
            f"run {run.id} decided {result.decision}"
            + (f" ({result.reason})" if result.reason else "")
            + ": there is no order to place"
        )
    order = OrderRequest(
        contract=Contract(symbol=result.symbol),
        side="buy" if final.action == "BUY" else "sell",
        quantity=shares or 1,
        price=final.entry,
        as_of=result.as_of,
        source=f"desk run {run.id}",
        note=f"{final.action} (stop {final.stop}, target {final.target}): {final.rationale[:160]}",
    )
    return [order]


def _from_fund(run: RunRecord, quantity: int | None) -> list[OrderRequest]:
    from alphadesk.pipelines.fund.models import FundResult

    assert run.result is not None
    if quantity is not None:
        raise ValueError(
            f"run {run.id} is a fund run: its orders carry their own quantities; leave out "
            "--quantity"
        )
    result = FundResult.model_validate(run.result)
    if not result.orders:
        why = f" ({result.reason})" if result.reason else ""
        raise ValueError(f"run {run.id} decided {result.decision}{why}: there is no order to place")
    return list(result.orders)


# Run kind -> the orders its decision stands for, given a quantity (None: the default):
# contracts for a CSP run, shares for a trading-desk run, none for a fund run.
_FROM_DECISION: dict[str, Callable[[RunRecord, int | None], list[OrderRequest]]] = {
    "csp": _from_csp,
    "desk": _from_trading,
    "fund": _from_fund,
}


def orders_from_run(
    store: RunStore, run_id: str, quantity: int | None = None
) -> list[OrderRequest]:
    """The orders a recorded decision stands for, in the order to place them: one for a
    desk (``quantity`` contracts or shares, default 1), every order of a fund's rebalance.

    Raises:
        RunNotFound: no such run.
        ValueError: a run of a kind that decides no order, unfinished, a rejection, a
            decision with nothing to trade, or a quantity for a fund run.
    """
    run = store.get(run_id)
    convert = _FROM_DECISION.get(run.kind)
    if convert is None:
        raise ValueError(
            f"run {run_id} is a {run.kind} run; orders follow {', '.join(_FROM_DECISION)} runs"
        )
    if run.result is None:
        raise ValueError(f"run {run_id} did not finish ({run.status})")
    return convert(run, quantity)


def follow_run(
    store: RunStore,
    portfolio: PaperPortfolio,
    market: MarketData,
    run_id: str,
    *,
    account: str,
    quantity: int | None = None,
    force: bool = False,
) -> list[Order]:
    """Place the orders of run ``run_id`` in ``account``: every price is checked against
    its day before the first is placed, and a fund run is followed once.

    Raises:
        RunNotFound, ValueError: as :func:`orders_from_run`; a fund run already followed.
        AccountNotFound: no such account.
        OrderRejected: a price off its day (without ``force``), or an order the account
            refuses (the orders placed before it stay placed; the message says which).
    """
    orders = orders_from_run(store, run_id, quantity)
    portfolio.account(account)
    source = orders[0].source
    if source.startswith("fund run"):
        done = [o.id for o in portfolio.orders(account) if o.source == source]
        if done:
            raise ValueError(
                f"run {run_id} was followed in account {account} already (orders "
                f"{', '.join(map(str, done))})"
            )
    for order in orders:  # every price checked before the first order is placed
        verify_price(market, order, force=force)
    placed: list[Order] = []
    for order in orders:
        try:
            placed.append(place(portfolio, market, order, account, force=force))
        except Exception as exc:
            if placed:
                ids = ", ".join(str(o.id) for o in placed)
                exc.args = (f"{exc} (orders {ids} of this run were placed before it)",)
            raise
    return placed

"""The paper order a desk's recorded decision stands for (``portfolio follow``): a CSP run
sells its put, a trading-desk run buys or sells the stock at the judge's entry. It reads
the desks' result models, so it sits one tier above them; placing the order is the paper
account's (:mod:`alphadesk.portfolio`)."""

from __future__ import annotations

from collections.abc import Callable

from alphadesk.portfolio import Contract, OrderRequest
from alphadesk.store import RunRecord, RunStore

__all__ = ["order_from_run"]


def _from_csp(run: RunRecord, contracts: int) -> OrderRequest:
    from alphadesk.pipelines.csp.models import CspResult

    assert run.result is not None
    result = CspResult.model_validate(run.result)
    if result.synthesis is None:
        raise ValueError(
            f"run {run.id} decided {result.decision} ({result.reason}): there is no position "
            "to open"
        )
    put = result.synthesis.suggested_position
    return OrderRequest(
        contract=Contract(
            symbol=put.symbol, right="put", strike=put.strike, expiration=put.expiration
        ),
        side="sell",
        quantity=contracts,
        price=put.premium,
        as_of=result.as_of,
        source=f"csp run {run.id}",
        note=f"sell to open: {result.synthesis.rationale[:200]}",
    )


def _from_trading(run: RunRecord, shares: int) -> OrderRequest:
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
    return OrderRequest(
        contract=Contract(symbol=result.symbol),
        side="buy" if final.action == "BUY" else "sell",
        quantity=shares,
        price=final.entry,
        as_of=result.as_of,
        source=f"desk run {run.id}",
        note=f"{final.action} (stop {final.stop}, target {final.target}): {final.rationale[:160]}",
    )


# Desk kind -> the order its decision stands for: contracts for a CSP run, shares for a
# trading-desk run.
_FROM_DECISION: dict[str, Callable[[RunRecord, int], OrderRequest]] = {
    "csp": _from_csp,
    "desk": _from_trading,
}


def order_from_run(store: RunStore, run_id: str, contracts: int = 1) -> OrderRequest:
    """The order a desk's recorded decision stands for.

    Raises:
        RunNotFound: no such run.
        ValueError: a run of a kind that decides no order, unfinished, or a rejection.
    """
    run = store.get(run_id)
    convert = _FROM_DECISION.get(run.kind)
    if convert is None:
        raise ValueError(
            f"run {run_id} is a {run.kind} run; orders follow {', '.join(_FROM_DECISION)} runs"
        )
    if run.result is None:
        raise ValueError(f"run {run_id} did not finish ({run.status})")
    return convert(run, contracts)

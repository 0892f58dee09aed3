"""Backtrader's broker as every backtest here configures it: cash, commission, slippage.

The reference engine (:mod:`.reference`) and strategy code run in the sandbox
(:mod:`.native`) both trade on it, so their fills follow the same rules as the fast path.
"""

from __future__ import annotations

import backtrader as bt

from .models import BacktestConfig, Costs

__all__ = ["backtrader_broker"]


class _StockCommission(bt.CommInfoBase):
    """Shares: cash pays the full value, short sales credit it, no margin or leverage."""

    params = (
        ("stocklike", True),
        ("commtype", bt.CommInfoBase.COMM_PERC),
        ("percabs", True),
    )


def backtrader_broker(config: BacktestConfig) -> bt.brokers.BackBroker:
    """Backtrader's broker with the run's cash, slippage and commission (both engines' rules)."""
    costs: Costs = config.costs
    broker = bt.brokers.BackBroker(
        cash=float(config.cash),
        slip_perc=costs.slippage,
        slip_open=True,  # market orders fill at the open: let the slip apply there
        slip_match=True,
        slip_out=False,
    )
    commtype = (
        bt.CommInfoBase.COMM_PERC
        if costs.commission_type == "percent"
        else bt.CommInfoBase.COMM_FIXED
    )
    broker.addcommissioninfo(_StockCommission(commission=costs.commission, commtype=commtype))
    return broker

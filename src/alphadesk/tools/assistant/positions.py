"""``get_positions``: the paper portfolio valued at the run's instant, exactly as the CLI
and the API report it (:func:`alphadesk.portfolio.account_report`)."""

from __future__ import annotations

import asyncio

from alphadesk.agent import RunContext, tool
from alphadesk.data.errors import DataError
from alphadesk.portfolio import AccountReport, DamagedAccount, account_report
from alphadesk.tools.assistant.deps import ChatDeps
from alphadesk.tools.common import ToolOutput

__all__ = ["PositionsReport", "get_positions"]


class PositionsReport(AccountReport, ToolOutput):
    """The paper account at the run's instant."""


@tool
async def get_positions(ctx: RunContext[ChatDeps]) -> PositionsReport:
    """The user's paper portfolio: cash, positions, cost basis, P&L and account value.

    Each position (stocks and options; a negative quantity is short) with its average
    cost, the mark at the run's instant, market value, unrealised and realised P&L; then
    the account totals. Positions without a price are held at cost and named in missing.
    """
    book = ctx.deps.portfolio
    if book is None:
        raise DataError("no paper portfolio is configured for this session")
    # Only the orders traded by the run's instant: a valuation never sees the future.
    try:
        report = await asyncio.to_thread(
            account_report, book, ctx.deps.market, ctx.as_of, ctx.deps.account
        )
    except DamagedAccount as exc:  # the model says so instead of the chat failing
        raise DataError(str(exc)) from None
    return PositionsReport(symbol="PORTFOLIO", **report.model_dump())

"""The paper account: orders and their price checks (fills), the rules they keep (cash
and the collateral of short puts), accounts in SQLite, and the account marked at an
instant. The CLI, the API and the assistant all go through here.

Modules: :mod:`~alphadesk.portfolio.models` (contracts, orders, positions, refusals),
:mod:`~alphadesk.portfolio.book` (replaying orders: cash, positions, collateral, rules),
:mod:`~alphadesk.portfolio.account` (:class:`PaperPortfolio`, the SQLite order log),
:mod:`~alphadesk.portfolio.fills` (a price against the trade date's bar),
:mod:`~alphadesk.portfolio.dividends` (the cash dividends owed, from the data),
:mod:`~alphadesk.portfolio.marks` and :mod:`~alphadesk.portfolio.report` (the account
marked from the data at an instant), :mod:`~alphadesk.portfolio.targets` (a book's limits,
target weights, and the orders that reach them within the limits).
"""

from alphadesk.portfolio.account import DEFAULT_ACCOUNT, DEFAULT_CASH, OrderLog, PaperPortfolio
from alphadesk.portfolio.dividends import account_dividends, dividend_credits
from alphadesk.portfolio.fills import verify_price
from alphadesk.portfolio.models import (
    ACCOUNT_PATTERN,
    Account,
    AccountExists,
    AccountNotFound,
    Contract,
    DamagedAccount,
    DividendCredit,
    DividendPaid,
    InsufficientCash,
    Order,
    OrderRejected,
    OrderRequest,
    Position,
    PositionValue,
    PriceNotVerified,
    SetAside,
    Valuation,
)
from alphadesk.portfolio.report import AccountReport, HeldPosition, account_report
from alphadesk.portfolio.targets import (
    BookLimits,
    TargetWeight,
    check_targets,
    orders_for_targets,
)

__all__ = [
    "ACCOUNT_PATTERN",
    "DEFAULT_ACCOUNT",
    "DEFAULT_CASH",
    "Account",
    "AccountExists",
    "AccountNotFound",
    "AccountReport",
    "BookLimits",
    "Contract",
    "DamagedAccount",
    "DividendCredit",
    "DividendPaid",
    "HeldPosition",
    "InsufficientCash",
    "Order",
    "OrderLog",
    "OrderRejected",
    "OrderRequest",
    "PaperPortfolio",
    "Position",
    "PositionValue",
    "PriceNotVerified",
    "SetAside",
    "TargetWeight",
    "Valuation",
    "account_dividends",
    "account_report",
    "check_targets",
    "dividend_credits",
    "orders_for_targets",
    "verify_price",
]

"""The portfolio manager: one decision across many symbols. It reads the trading desk's
decision on each name, the book's holdings, cash and prices, and the book's limits, and
names a target weight per name with its reason (prompt templates in ``prompts/``, a typed
output checked against the limits and the cash, and a deterministic ``rules`` policy)."""

from alphadesk.agents.fund.manager import PORTFOLIO_MANAGER, FundDeps
from alphadesk.agents.fund.models import DeskCall, Holding, PortfolioDecision
from alphadesk.agents.fund.tasks import FundTask

__all__ = ["PORTFOLIO_MANAGER", "DeskCall", "FundDeps", "FundTask", "Holding", "PortfolioDecision"]

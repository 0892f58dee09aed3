"""What the paper portfolio records and reports: contracts, orders, positions, valuations,
and the typed refusals of an order or an account.

Every amount is a finite number within bounds (:data:`MAX_CASH`, :data:`MAX_QUANTITY`,
:data:`MAX_PRICE`), so no order, position or valuation can reach infinity or NaN."""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal
from zoneinfo import ZoneInfo

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from alphadesk.data.actions import MARKET_OPEN
from alphadesk.data.calendar import NEW_YORK

__all__ = [
    "ACCOUNT_PATTERN",
    "MAX_CASH",
    "MAX_PRICE",
    "MAX_QUANTITY",
    "Account",
    "AccountExists",
    "AccountNotFound",
    "Contract",
    "DamagedAccount",
    "InsufficientCash",
    "Order",
    "OrderRejected",
    "OrderRequest",
    "Position",
    "PositionValue",
    "PriceNotVerified",
    "SetAside",
    "Valuation",
]


ACCOUNT_PATTERN = r"^[A-Za-z0-9_-]{1,40}$"
MAX_CASH = 1e12  # dollars: an account's starting cash, an order's fees
MAX_QUANTITY = 1e9  # shares or contracts in one order
MAX_PRICE = 1e9  # dollars per share: a price or a strike


class OrderRejected(ValueError):
    """An order the paper account refuses; the message says why and what would pass."""

    code = "order_rejected"


class InsufficientCash(OrderRejected):
    """The order needs more free cash (cash less the collateral of open short puts) than
    the account has at the order's trade date."""

    code = "insufficient_cash"

    def __init__(self, message: str, *, needed: float, free: float) -> None:
        super().__init__(message)
        self.needed, self.free = needed, free


class PriceNotVerified(OrderRejected):
    """The price is off the day's range, or there is no data to check it against; placing
    it anyway needs force (and the order is labelled forced)."""

    code = "price_not_verified"


class AccountNotFound(LookupError):
    """No paper account of that name; the message lists the ones there are."""

    def __init__(self, name: str, existing: list[str]) -> None:
        known = ", ".join(existing) if existing else "none yet"
        super().__init__(f"no paper account named {name!r} (accounts: {known})")
        self.name, self.existing = name, existing


class AccountExists(ValueError):
    """An account of that name is already open."""


class DamagedAccount(ValueError):
    """The account's own stored row holds no usable amount (a starting cash an older
    version let through, such as inf); resetting the account repairs it."""

    code = "account_damaged"


class Account(BaseModel):
    """A paper account: its name, starting cash and when it was opened. A stored starting
    cash that is not an amount reads as None, with what is wrong and how to repair it."""

    name: str
    starting_cash: float | None
    created_at: AwareDatetime
    damaged: str | None = None


class Contract(BaseModel):
    """What is traded: a stock (or ETF, crypto) or a listed option on it."""

    model_config = ConfigDict(frozen=True)

    symbol: str = Field(description="Underlying ticker, upper case.")
    right: Literal["put", "call"] | None = Field(None, description="Set for an option.")
    strike: float | None = Field(None, gt=0, le=MAX_PRICE, allow_inf_nan=False)
    expiration: date | None = None

    @model_validator(mode="after")
    def _option_complete(self) -> Contract:
        fields = (self.right, self.strike, self.expiration)
        if any(f is not None for f in fields) and not all(f is not None for f in fields):
            raise ValueError("an option needs right (put/call), strike and expiration")
        return self

    @property
    def is_option(self) -> bool:
        return self.right is not None

    @property
    def multiplier(self) -> int:
        return 100 if self.is_option else 1

    @property
    def key(self) -> str:
        """``AAPL`` or ``SPY 2024-12-20 450P``: one position per key."""
        if not self.is_option:
            return self.symbol
        assert self.expiration is not None and self.right is not None
        return f"{self.symbol} {self.expiration.isoformat()} {self.strike:g}{self.right[0].upper()}"


class OrderRequest(BaseModel):
    """An order to place: buy or sell a quantity of a contract at a price on a trade date."""

    model_config = ConfigDict(frozen=True)

    contract: Contract
    side: Literal["buy", "sell"]
    quantity: float = Field(
        gt=0, le=MAX_QUANTITY, allow_inf_nan=False, description="Shares or contracts."
    )
    # ge, not gt: order logs written before prices were checked must still read; placing
    # an order refuses a price of 0.
    price: float = Field(
        ge=0,
        le=MAX_PRICE,
        allow_inf_nan=False,
        description="Per share (per share of the option's 100).",
    )
    fees: float = Field(
        0.0, ge=0, le=MAX_CASH, allow_inf_nan=False, description="Commission in dollars."
    )
    as_of: AwareDatetime | None = Field(
        None, description="The trade date: the market instant of the fill. Default: when placed."
    )
    source: str = Field("manual", description="Who placed it: manual, a desk run, ...")
    note: str = ""
    forced: bool = Field(
        False, description="Placed with force: the price could not be verified against the data."
    )
    price_check: str = Field("", description="How the price was checked, or why it was not.")

    @property
    def cash_change(self) -> float:
        """Cash in (positive) or out (negative), fees included."""
        notional = self.quantity * self.price * self.contract.multiplier
        return (notional if self.side == "sell" else -notional) - self.fees


class DividendCredit(BaseModel):
    """A cash dividend as an entry of the account's timeline: at the open of ``ex_date``
    the shares of ``symbol`` held at the previous close get ``amount`` each (a short
    position pays it)."""

    model_config = ConfigDict(frozen=True)

    symbol: str
    ex_date: date
    amount: float = Field(allow_inf_nan=False, description="Cash per share as traded.")
    source: str = Field("", description="The provider whose record it is.")

    @property
    def as_of(self) -> datetime:
        """When it is applied: the 09:30 New York open of the ex-date."""
        return datetime.combine(self.ex_date, MARKET_OPEN, ZoneInfo(NEW_YORK))


class DividendPaid(BaseModel):
    """A dividend the replay applied: the shares held then and the cash it moved."""

    symbol: str
    ex_date: date
    shares: float = Field(description="Held at the close before the ex-date; negative: short.")
    amount: float = Field(description="Per share.")
    cash: float = Field(description="shares x amount: received, or paid by a short.")
    source: str = ""


class Order(OrderRequest):
    """An order as recorded: ``as_of`` is its trade date, ``placed_at`` when it was recorded."""

    id: int
    account: str
    as_of: AwareDatetime = Field(description="The trade date: the market instant of the fill.")
    placed_at: AwareDatetime = Field(description="When the order was recorded (wall clock).")


class SetAside(BaseModel):
    """A stored order the account leaves out: one an older version accepted that is
    impossible (an option sold after it expired, an amount that is not finite) or that no
    longer reads. It changes nothing; valuations name it."""

    id: int
    reason: str

    def describe(self) -> str:
        return f"order {self.id} left out: {self.reason}"


class Position(BaseModel):
    """A holding: signed quantity (negative is short), average cost, realised P&L."""

    contract: Contract
    quantity: float
    average_cost: float = Field(description="Per share, positive; 0 when flat.")
    realized_pnl: float = 0.0
    opened_at: datetime | None = None

    @property
    def cost_basis(self) -> float:
        """Signed cost of the open quantity (negative for a short: premium received)."""
        return self.quantity * self.average_cost * self.contract.multiplier


class PositionValue(BaseModel):
    """A position at a mark."""

    key: str
    contract: Contract
    quantity: float
    average_cost: float
    cost_basis: float
    mark: float | None = Field(description="Per share; None when no price was found.")
    market_value: float = Field(description="Signed; at cost when there is no mark.")
    unrealized_pnl: float
    realized_pnl: float


class Valuation(BaseModel):
    """An account at an instant and a set of marks: cash, positions, P&L, account value."""

    account: str
    starting_cash: float
    cash: float
    collateral: float = Field(0.0, description="Cash reserved for the open short puts.")
    positions: list[PositionValue]
    market_value: float = Field(description="Signed value of the open positions.")
    realized_pnl: float
    unrealized_pnl: float
    account_value: float = Field(description="cash + market_value.")
    total_pnl: float = Field(description="account_value - starting_cash.")
    unpriced: list[str] = Field(default_factory=list, description="Positions held at cost.")
    set_aside: list[SetAside] = Field(
        default_factory=list, description="Stored orders left out, and why."
    )
    dividends: list[DividendPaid] = Field(
        default_factory=list, description="Dividends credited (or paid by shorts), in cash."
    )
    orders: int

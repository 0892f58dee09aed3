"""The API's request and response bodies. Requests mirror the CLI's options; results are
the pipelines' own models, so the OpenAPI page documents exactly what a run returns."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from alphadesk.agents.csp.models import CspConstraints
from alphadesk.agents.desk.models import AnalystName
from alphadesk.pipelines.models import Depth
from alphadesk.portfolio.models import ACCOUNT_PATTERN, MAX_CASH, MAX_PRICE, MAX_QUANTITY

__all__ = [
    "AccountBody",
    "AnalyzeBody",
    "ChatBody",
    "CspBody",
    "FollowBody",
    "FundBody",
    "Health",
    "OrderBody",
    "ReplayResponse",
    "RunDetail",
    "RunSummary",
    "ScreenBody",
]

_SYMBOL = Field(min_length=1, max_length=24, examples=["NVDA"], description="A ticker.")
_AS_OF = Field(
    None,
    examples=["2021-06-30"],
    description="Analyse as of this date's close (a day without a session: the close before). "
    "Default: now, or the last close the data covers when no provider has current data.",
)
_MODEL = Field(
    None,
    examples=["rules"],
    description="A LiteLLM model string for every agent, or 'rules' (offline). Default: the "
    "server's settings (rules unless configured). GET /health lists the allowed ones.",
)


_FORCE = Field(
    False,
    description="Place it even when the price is off the trade date's low-high range or the "
    "symbol has no data that day; the order is labelled forced.",
)


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AnalyzeBody(_Body):
    """The trading desk on one symbol (``alphadesk desk``)."""

    symbol: str = _SYMBOL
    as_of: date | None = _AS_OF
    model: str | None = _MODEL
    depth: Depth = "standard"
    analysts: list[AnalystName] | None = Field(
        None, min_length=1, max_length=4, description="Default: the settings' (all four)."
    )
    rounds: int | None = Field(
        None,
        ge=1,
        le=5,
        description="Bull/bear debate rounds (each: both argue, then each answers the other).",
    )
    risk_rounds: int | None = Field(
        None,
        ge=1,
        le=5,
        description="Risk discussion rounds (each: all three argue, then answer the others).",
    )
    memory: bool | None = Field(None, description="Recall and reflect (default: the settings).")


class FundBody(_Body):
    """One book over many names (``alphadesk fund``): the desk on each, then the
    portfolio manager's target weights and orders, from the account's holdings and cash."""

    symbols: list[str] | None = Field(
        None, min_length=1, max_length=100, examples=[["AAPL", "JPM", "PG"]],
        description="The names; or give universe.",
    )  # fmt: skip
    universe: str | None = Field(
        None, max_length=24, examples=["dow30"], description="Every member of an index instead."
    )
    as_of: date | None = _AS_OF
    model: str | None = _MODEL
    depth: Depth = "standard"
    account: str = Field(
        "paper", pattern=ACCOUNT_PATTERN, description="The paper account whose book it is."
    )


class CspBody(_Body):
    """The cash-secured-put desk on one symbol (``alphadesk csp``)."""

    symbol: str = _SYMBOL
    as_of: date | None = _AS_OF
    model: str | None = _MODEL
    depth: Depth = "standard"
    parallel_research: bool = Field(False, description="Research alongside the chart step.")
    constraints: CspConstraints = Field(
        default_factory=CspConstraints, description="The put that may be sold."
    )


class ScreenBody(_Body):
    """A CSP screen (``alphadesk screen``): a cheap pre-filter, then the desk on survivors."""

    symbols: list[str] | None = Field(
        None, max_length=100, description="Default: the data providers' whole universe."
    )
    as_of: date | None = _AS_OF
    model: str | None = _MODEL
    depth: Depth = "quick"
    concurrency: int = Field(4, ge=1, le=8, description="Symbols analysed at the same time.")
    constraints: CspConstraints = Field(
        default_factory=CspConstraints, description="The put that may be sold."
    )


class ChatBody(_Body):
    """One question to the assistant (``alphadesk ask``)."""

    question: str = Field(min_length=1, max_length=4_000, examples=["how does NVDA look?"])
    session_id: str | None = Field(
        None, max_length=64, pattern=r"^[A-Za-z0-9_-]+$", description="None starts a session."
    )
    as_of: date | None = Field(
        None, description="Answer as of this date's close. Default: now, or the last date the "
        "data covers when no provider is online.",
    )  # fmt: skip
    model: str | None = _MODEL


class OrderBody(_Body):
    """A paper order by hand (``alphadesk portfolio buy/sell``)."""

    side: Literal["buy", "sell"]
    symbol: str = _SYMBOL
    quantity: float = Field(gt=0, le=MAX_QUANTITY, description="Shares, or option contracts.")
    price: float | None = Field(
        None,
        gt=0,
        le=MAX_PRICE,
        description="Per share. Default: the close at as_of (stocks only). Checked against "
        "that day's low-high range.",
    )
    right: Literal["put", "call"] | None = Field(None, description="Set for an option.")
    strike: float | None = Field(None, gt=0, le=MAX_PRICE)
    expiration: date | None = None
    as_of: date | None = Field(
        None, examples=["2021-06-30"], description="The trade date: fill at this date's close "
        "(a day without a session: the close before). Default: now.",
    )  # fmt: skip
    account: str = Field("paper", pattern=ACCOUNT_PATTERN)
    force: bool = _FORCE


class FollowBody(_Body):
    """Place the order a desk run decided (``alphadesk portfolio follow``)."""

    run_id: str = Field(min_length=1, max_length=64)
    quantity: int | None = Field(
        None, ge=1, le=100_000, description="Contracts (CSP) or shares (desk); default 1."
    )
    account: str = Field("paper", pattern=ACCOUNT_PATTERN)
    force: bool = _FORCE


class AccountBody(_Body):
    """A new paper account (``alphadesk portfolio open``)."""

    name: str = Field(pattern=ACCOUNT_PATTERN, examples=["ira"])
    cash: float = Field(100_000.0, ge=0, le=MAX_CASH, description="Starting cash.")


class RunSummary(BaseModel):
    """One line of ``GET /runs``."""

    id: str
    kind: str
    title: str
    status: str
    created_at: datetime
    finished_at: datetime | None
    as_of: datetime | None
    model: str | None
    requests: int = Field(description="Model calls (not answered from the cache).")
    cost_usd: float


class RunDetail(RunSummary):
    """A run as recorded, with its request, result and artifacts."""

    request: dict[str, Any]
    result: dict[str, Any] | None
    error: str | None
    tokens: int
    artifacts: list[str] = Field(description="Names; report.md and *.png have their own routes.")


class ReplayResponse(BaseModel):
    """A run replayed from the response cache and compared with the recorded one."""

    replayed: str = Field(description="The recorded run.")
    run_id: str | None = Field(description="The new run.")
    same_decision: bool
    decision: str
    model_calls: int
    result: dict[str, Any]


class Health(BaseModel):
    status: Literal["ok"] = "ok"
    version: str
    providers: list[str]
    default_model: str = Field(description="The model a request without 'model' runs with.")
    models: list[str] = Field(description="The model strings a request may ask for.")
    auth: bool = Field(description="Whether requests need the API key.")
    max_runs: int
    runs_active: int
    workers: int = Field(
        0, description="Worker processes running the pipelines (0: in the server's process)."
    )

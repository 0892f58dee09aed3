"""The screen's rule checks and ranking: a cheap deterministic pre-filter, the desk on a
symbol that passes it, and one date's outcomes ranked best first.

The pre-filter reads only computed facts (trend, IV versus HV, option liquidity, the
earnings window), so a symbol it rejects costs no model call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime, timedelta

from pydantic import BaseModel, Field

from alphadesk.agents.csp.models import CspConstraints
from alphadesk.analytics.errors import AnalyticsError
from alphadesk.analytics.trend import trend_assessment
from alphadesk.analytics.volatility import historical_volatility
from alphadesk.data.base import MarketData
from alphadesk.data.errors import DataError
from alphadesk.pipelines.csp.models import CspRequest, CspResult, Depth
from alphadesk.pipelines.runner import PipelineRunner
from alphadesk.tools.common import adjusted_frame

__all__ = ["ScreenCheck", "ScreenResult", "prefilter", "ranked", "screen_symbol"]

_HISTORY = timedelta(days=400)
_MIN_IV_HV = 0.8  # premiums much cheaper than realised movement are not worth selling
_MAX_SPREAD = 0.15  # at-the-money put spread, as a fraction of its mid
_OPTIONABLE = {"equity", "etf"}


class ScreenCheck(BaseModel):
    """The pre-filter's verdict on one symbol, with the facts behind it."""

    symbol: str
    passed: bool
    reasons: list[str] = Field(default_factory=list, description="Why it was filtered out.")
    notes: list[str] = Field(default_factory=list, description="What could not be checked.")
    error: str | None = Field(
        None,
        description="An unexpected failure while screening the symbol: neither filtered out "
        "nor analysed (a bug or an outage to look into, not a verdict on the symbol).",
    )
    trend: str | None = None
    hv: float | None = None
    iv: float | None = None
    iv_hv: float | None = None
    atm_spread: float | None = None


class ScreenResult(BaseModel):
    """One date's screen: every symbol's check and the desk's results, best first."""

    as_of: datetime
    checks: list[ScreenCheck]
    results: list[CspResult] = Field(description="Desk results, best first.")

    @property
    def filtered(self) -> list[ScreenCheck]:
        """The symbols the pre-filter turned away."""
        return [c for c in self.checks if not c.passed and c.error is None]

    @property
    def errors(self) -> list[ScreenCheck]:
        """The symbols whose screening failed unexpectedly."""
        return [c for c in self.checks if c.error is not None]

    @property
    def rejected_share(self) -> float:
        return len(self.filtered) / len(self.checks) if self.checks else 0.0


def prefilter(
    market: MarketData, symbol: str, as_of: datetime, rules: CspConstraints
) -> ScreenCheck:
    """Trend, IV/HV, liquidity and earnings checks for one symbol (no model involved)."""
    check = ScreenCheck(symbol=symbol, passed=False)
    try:
        if market.instrument(symbol, as_of).asset_type not in _OPTIONABLE:
            return check.model_copy(update={"reasons": ["not an optionable stock or ETF"]})
        bars = market.daily_bars(symbol, as_of, start=(as_of - _HISTORY).date())
        frame = adjusted_frame(bars)  # trend and HV across splits: adjusted returns
        trend = trend_assessment(frame)
        hv = historical_volatility(frame["close"], window=20).value
        chain = market.option_chain(symbol, as_of, min_dte=rules.dte_min, max_dte=rules.dte_max)
    except (DataError, AnalyticsError) as exc:
        return check.model_copy(update={"reasons": [f"{type(exc).__name__}: {exc}"]})
    puts = chain.select("put", chain.expirations[0]) if chain.expirations else []
    atm = min(puts, key=lambda c: abs(c.strike - chain.underlying_price), default=None)
    iv = atm.iv if atm is not None else None
    spread = (
        (atm.ask - atm.bid) / atm.mid
        if atm is not None and atm.mid and atm.bid is not None and atm.ask is not None
        else None
    )
    reasons = []
    if trend.direction == "down" and trend.quality != "weak":
        reasons.append(f"{trend.quality} downtrend")
    if iv is not None and hv > 0 and iv / hv < _MIN_IV_HV:
        reasons.append(f"IV {iv:.0%} is cheap against HV {hv:.0%}")
    if atm is None:
        reasons.append(f"no puts between {rules.dte_min} and {rules.dte_max} days")
    elif spread is None or spread > _MAX_SPREAD:
        reasons.append("illiquid options: wide or missing at-the-money spread")
    earnings_reason, notes = _earnings_window(market, symbol, as_of, rules)
    reasons += earnings_reason
    return ScreenCheck(
        symbol=symbol,
        passed=not reasons,
        reasons=reasons,
        notes=notes,
        trend=f"{trend.quality} {trend.direction}",
        hv=round(hv, 4),
        iv=None if iv is None else round(iv, 4),
        iv_hv=None if iv is None or hv <= 0 else round(iv / hv, 3),
        atm_spread=None if spread is None else round(spread, 4),
    )


def _earnings_window(
    market: MarketData, symbol: str, as_of: datetime, rules: CspConstraints
) -> tuple[list[str], list[str]]:
    try:
        upcoming = market.earnings(symbol, as_of).upcoming(as_of)
    except DataError as exc:
        return [], [f"earnings calendar unavailable ({type(exc).__name__})"]
    horizon = as_of + timedelta(days=rules.dte_max)
    inside = [e.time.date() for e in upcoming if e.time <= horizon]
    return (
        [f"earnings on {inside[0]} inside the {rules.dte_max}-day window"] if inside else []
    ), []


async def screen_symbol(
    runner: PipelineRunner[CspRequest, CspResult],
    symbol: str,
    as_of: datetime,
    *,
    depth: Depth = "quick",
    constraints: CspConstraints | None = None,
) -> tuple[ScreenCheck, CspResult | None]:
    """One symbol: the pre-filter, then the desk if it passed."""
    rules = constraints or CspConstraints()
    check = await asyncio.to_thread(prefilter, runner.pipeline.market, symbol, as_of, rules)
    if not check.passed:
        return check, None
    request = CspRequest(symbol=symbol, as_of=as_of, depth=depth, constraints=rules)
    return check, await runner.analyze(request)


def ranked(
    as_of: datetime, outcomes: Sequence[tuple[ScreenCheck, CspResult | None]]
) -> ScreenResult:
    """One date's screen from its symbols' outcomes, the desk's results best first."""
    results = [result for _, result in outcomes if result is not None]
    return ScreenResult(
        as_of=as_of,
        checks=[check for check, _ in outcomes],
        results=sorted(results, key=_rank),
    )


def _rank(result: CspResult) -> tuple[int, float]:
    order = {"select": 0, "reject": 1, "failed": 2}[result.decision]
    roc = result.options.weekly_roc if result.options and result.options.weekly_roc else 0.0
    return order, -roc

"""A book's limits, target weights per name, and the orders that reach them.

One book: a cash balance and shares per symbol, valued at one set of prices (its NAV:
cash plus every holding at its price). A target names a weight per symbol, a fraction
of that NAV (negative: short), with its reason. Two pure functions, called by the
portfolio manager, the fund pipeline and the book evaluation alike:

- :func:`check_targets` lists what in a set of targets breaks the limits, in words a
  model can act on (the portfolio manager's output is retried until the list is empty);
- :func:`orders_for_targets` turns targets into orders that keep the limits whatever the
  targets say: weights are clipped to the cap (and to zero without shorts), scaled to the
  gross exposure, moves below the minimum trade are skipped, every move is scaled down to
  the turnover cap, and buys are scaled down to the cash left after the sales and costs.

Weights are measured against the NAV before trading, at the same prices. A holding the
targets do not name is left as it is. Whole shares unless ``fractional``: a target's
shares are rounded toward zero, so rounding never raises a weight. Sales come before
buys in the list, the order they must be placed in for the cash to suffice at each step.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from alphadesk.money import usd
from alphadesk.portfolio.models import Contract, OrderRequest

__all__ = ["BookLimits", "TargetWeight", "check_targets", "nav_of", "orders_for_targets"]

_EPS = 1e-9
Targets = Sequence["TargetWeight"] | Mapping[str, float]


class BookLimits(BaseModel):
    """What a book may hold and trade in one rebalance."""

    model_config = ConfigDict(frozen=True)

    max_weight: float = Field(0.25, gt=0, le=1, description="Most of the NAV in one name.")
    allow_short: bool = Field(False, description="Negative weights (short sales) allowed.")
    max_gross: float = Field(
        1.0, gt=0, le=4, description="Sum of |weights| at most this: 1 is no leverage."
    )
    min_trade: float = Field(100.0, ge=0, description="Dollars: smaller moves are not made.")
    max_turnover: float = Field(
        1.0, gt=0, le=4, description="Traded value in one rebalance, a fraction of the NAV."
    )
    cost_bps: float = Field(1.0, ge=0, le=1000, description="Cost of a trade, bp of its value.")
    fractional: bool = Field(False, description="Fractional shares (else whole shares).")

    @property
    def cost_rate(self) -> float:
        return self.cost_bps / 1e4

    def cash_floor(self, nav: float) -> float:
        """The least cash the book may hold: 0, or a loan within the gross exposure."""
        return -max(0.0, self.max_gross - 1.0) * nav

    def describe(self) -> str:
        short = "short sales allowed" if self.allow_short else "no short sales"
        gross = "no leverage" if self.max_gross <= 1 else f"gross exposure {self.max_gross:g}x"
        return (
            f"at most {self.max_weight:.0%} of the NAV per name, {short}, {gross}, trades of "
            f"at least {usd(self.min_trade)}, turnover at most {self.max_turnover:.0%} of the "
            f"NAV, costs {self.cost_bps:g} bp"
        )


class TargetWeight(BaseModel):
    """The weight a name should have after the rebalance, and why."""

    symbol: str = Field(min_length=1, max_length=20)
    weight: float = Field(ge=-1, le=1, allow_inf_nan=False, description="Fraction of the NAV.")
    reason: str = Field(min_length=1, max_length=600)


def nav_of(cash: float, holdings: Mapping[str, float], prices: Mapping[str, float]) -> float:
    """Cash plus every holding at its price.

    Raises:
        KeyError: a holding without a price.
    """
    return cash + sum(shares * prices[symbol] for symbol, shares in holdings.items())


def _weights(targets: Targets) -> dict[str, float]:
    if isinstance(targets, Mapping):
        return {symbol: float(w) for symbol, w in targets.items()}
    return {t.symbol: t.weight for t in targets}


def _reasons(targets: Targets) -> dict[str, str]:
    return {} if isinstance(targets, Mapping) else {t.symbol: t.reason for t in targets}


def check_targets(
    targets: Targets,
    holdings: Mapping[str, float],
    cash: float,
    prices: Mapping[str, float],
    limits: BookLimits,
) -> list[str]:
    """What in ``targets`` breaks ``limits`` or the cash, each said with how to fix it
    (empty: nothing). The moves are taken exactly (no rounding to shares); a move below
    the minimum trade counts unless it closes the position or brings it down to the cap.
    """
    problems: list[str] = []
    if not isinstance(targets, Mapping):
        seen = [t.symbol for t in targets]
        twice = sorted({s for s in seen if seen.count(s) > 1})
        if twice:
            problems.append(f"{', '.join(twice)} named more than once: give one weight per name")
    weights = _weights(targets)
    unpriced = sorted(s for s in weights if s not in prices or not prices[s] > 0)
    if unpriced:
        known = ", ".join(sorted(prices))
        problems.append(f"no price for {', '.join(unpriced)}: name only these symbols: {known}")
        return problems
    nav = nav_of(cash, holdings, prices)
    if nav <= 0:
        return [f"the book is worth {usd(nav)}: there is nothing to allocate"]
    cap = limits.max_weight
    for symbol, w in sorted(weights.items()):
        if w > cap + _EPS:
            problems.append(
                f"{symbol}: weight {w:.4f} is above the cap of {cap:.4f} per name; give at most "
                f"{cap:.4f}"
            )
        elif w < -_EPS and not limits.allow_short:
            problems.append(
                f"{symbol}: weight {w:.4f} is a short sale, which these limits do not allow; "
                "give 0 to hold none"
            )
        elif w < -cap - _EPS:
            problems.append(f"{symbol}: short weight {w:.4f} is beyond the cap of -{cap:.4f}")
    current = {s: shares * prices[s] / nav for s, shares in holdings.items()}
    after = current | weights
    gross = sum(abs(w) for w in after.values())
    if gross > limits.max_gross + _EPS:
        others = sum(abs(w) for s, w in current.items() if s not in weights)
        kept = f" ({others:.4f} of it in names not given)" if others > _EPS else ""
        problems.append(
            f"the weights add up to a gross exposure of {gross:.4f}{kept}, above "
            f"{limits.max_gross:.4f} ({'no leverage' if limits.max_gross <= 1 else 'the limit'})"
            f"; scale them down so the sum of |weights| is at most {limits.max_gross:.4f}"
        )
    moves = {s: (w - current.get(s, 0.0)) * nav for s, w in weights.items()}
    problems += _small_moves(moves, weights, current, nav, limits)
    traded = sum(abs(v) for v in moves.values())
    if traded > limits.max_turnover * nav + _EPS * nav:
        problems.append(
            f"reaching these weights trades {usd(traded)}, {traded / nav:.1%} of the NAV "
            f"({usd(nav)}), above the turnover cap of {limits.max_turnover:.0%}; move fewer "
            "names, or move them part of the way"
        )
    costs = traded * limits.cost_rate
    left = cash - sum(moves.values()) - costs
    if left < limits.cash_floor(nav) - _EPS * nav:
        problems.append(
            f"the trades need {usd(sum(moves.values()) + costs)} (costs of {usd(costs)} "
            f"included) but the book has {usd(cash)} of cash: cash after would be {usd(left)}; "
            "lower the weights you buy so that they and the costs fit in the cash"
        )
    return problems


def _small_moves(
    moves: Mapping[str, float],
    weights: Mapping[str, float],
    current: Mapping[str, float],
    nav: float,
    limits: BookLimits,
) -> list[str]:
    """The moves below the minimum trade that are neither a close nor a cut to the cap."""
    found = []
    for symbol, move in sorted(moves.items()):
        if abs(move) < _EPS * nav or abs(move) >= limits.min_trade:
            continue
        if _exempt(weights[symbol], current.get(symbol, 0.0), limits.max_weight):
            continue
        now = current.get(symbol, 0.0)
        found.append(
            f"{symbol}: moving from {now:.4f} to {weights[symbol]:.4f} trades {usd(abs(move))}, "
            f"below the minimum trade of {usd(limits.min_trade)}; keep {now:.4f} or move it by "
            f"at least {limits.min_trade / nav:.4f}"
        )
    return found


def _exempt(target: float, now: float, cap: float) -> bool:
    """A small move that must still be made: closing the name, or cutting it to the cap."""
    return abs(target) < _EPS or (abs(now) > cap and abs(target) <= cap)


def orders_for_targets(
    targets: Targets,
    holdings: Mapping[str, float],
    cash: float,
    prices: Mapping[str, float],
    limits: BookLimits,
    *,
    as_of: datetime | None = None,
    source: str = "targets",
) -> list[OrderRequest]:
    """The orders that take the book (``holdings`` in shares, ``cash``, valued at
    ``prices``) toward ``targets`` (weights by symbol) within ``limits``: sales first.

    Whatever the targets say, the orders keep the limits: no buy takes a name above the
    cap, nothing is sold short without ``allow_short``, the traded value is at most the
    turnover cap times the NAV, and the cash after every order, costs included, is at
    least the floor (0 without leverage). Each order's ``fees`` are its costs; its
    ``note`` the target's reason; ``as_of`` and ``source`` are copied onto every order.

    Raises:
        KeyError: a target or holding without a price.
        ValueError: a book worth nothing, or a price that is not above 0.
    """
    for symbol, price in prices.items():
        if not (math.isfinite(price) and price > 0):
            raise ValueError(f"{symbol}: price {price} is not above 0")
    nav = nav_of(cash, holdings, prices)
    if not nav > 0:
        raise ValueError(f"the book is worth {usd(nav)}: there is nothing to allocate")
    goal = _goal_weights(_weights(targets), holdings, prices, nav, limits)
    held = {s: float(holdings.get(s, 0.0)) for s in goal}
    shares = {s: _round(goal[s] * nav / prices[s], limits) - held[s] for s in goal}
    shares = _drop_small(shares, held, prices, limits)
    traded = sum(abs(q) * prices[s] for s, q in shares.items())
    if traded > limits.max_turnover * nav:
        scale = limits.max_turnover * nav / traded
        shares = {s: _round(q * scale, limits) for s, q in shares.items()}
        shares = _drop_small(shares, held, prices, limits)
    shares = _within_cash(shares, held, cash, prices, nav, limits)
    reasons = _reasons(targets)
    orders = [
        OrderRequest(
            contract=Contract(symbol=symbol),
            side="sell" if q < 0 else "buy",
            quantity=abs(q),
            price=prices[symbol],
            fees=abs(q) * prices[symbol] * limits.cost_rate,
            as_of=as_of,
            source=source,
            note=reasons.get(symbol, "")[:300],
        )
        for symbol, q in sorted(shares.items(), key=lambda item: (item[1] > 0, item[0]))
        if q
    ]
    return orders


def _round(shares: float, limits: BookLimits) -> float:
    """Shares rounded toward zero (whole shares unless fractional)."""
    return shares if limits.fractional else float(math.trunc(shares + math.copysign(_EPS, shares)))


def _goal_weights(
    weights: Mapping[str, float],
    holdings: Mapping[str, float],
    prices: Mapping[str, float],
    nav: float,
    limits: BookLimits,
) -> dict[str, float]:
    """The targets clipped to the cap (and to 0 without shorts), then scaled so the gross
    exposure, names not given included, is within the limit."""
    cap = limits.max_weight
    low = -cap if limits.allow_short else 0.0
    clipped = {s: min(cap, max(low, w)) for s, w in weights.items()}
    others = sum(abs(q * prices[s]) / nav for s, q in holdings.items() if s not in clipped)
    gross = sum(abs(w) for w in clipped.values())
    room = max(0.0, limits.max_gross - others)
    if gross > room:
        clipped = {s: w * room / gross for s, w in clipped.items()}
    return clipped


def _drop_small(
    shares: Mapping[str, float],
    held: Mapping[str, float],
    prices: Mapping[str, float],
    limits: BookLimits,
) -> dict[str, float]:
    """Moves below the minimum trade left out, save one that closes the position."""
    kept = {}
    for symbol, q in shares.items():
        closes = held[symbol] != 0 and abs(held[symbol] + q) < _EPS
        if abs(q) * prices[symbol] >= limits.min_trade or (closes and q):
            kept[symbol] = q
    return kept


def _within_cash(
    shares: Mapping[str, float],
    held: Mapping[str, float],
    cash: float,
    prices: Mapping[str, float],
    nav: float,
    limits: BookLimits,
) -> dict[str, float]:
    """Buys scaled down to what the cash after the sales and every cost pays for.

    A sale brings its value less its cost; a short sale adds no buying power beyond that.
    """
    rate = limits.cost_rate
    sold = sum(-q * prices[s] for s, q in shares.items() if q < 0)
    bought = sum(q * prices[s] for s, q in shares.items() if q > 0)
    room = cash - limits.cash_floor(nav) + sold * (1 - rate)
    if bought * (1 + rate) <= room:
        return dict(shares)
    scale = max(0.0, room / (bought * (1 + rate)) * (1 - 1e-9))
    scaled = {s: (_round(q * scale, limits) if q > 0 else q) for s, q in shares.items()}
    kept = _drop_small(scaled, held, prices, limits)
    return {s: q for s, q in kept.items() if q}

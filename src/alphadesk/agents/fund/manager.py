"""The portfolio manager (deep tier): the desks' calls, the book and its limits in, a
target weight per name out, checked against the limits and the cash before it is taken.

Its ``rules`` policy is a plain rule, written down before any evaluation and fitted to
none (the numbers below are its whole state):

1. The long budget is the gross limit (at most 1: the rule never borrows) less the names
   held outside the desks' symbols, less a reserve for costs.
2. SELL: 0, sold in full. HOLD: the weight the name has now, cut to the cap. A failed desk
   decided nothing: its weight is kept as it is now (cut to the cap), and the reason says so.
3. BUY: an equal share of what the budget leaves after the SELL, HOLD and failed names,
   times the judge's conviction, at most the cap; never below the weight it has now (a BUY
   sells nothing). If the BUYs together exceed the budget, every increase is scaled down
   alike.
4. Moves beyond the turnover cap are scaled down alike (a cut to the cap is never scaled);
   a move below the minimum trade is not made (the name keeps its weight), save a close or
   a cut to the cap; if the buys then need more cash than the book has, every increase is
   scaled down alike until they fit.

Whatever answers (the rules or a model), the answer is checked by
:func:`~alphadesk.portfolio.targets.check_targets`; a violation goes back as a retry that
lists it, and after the last retry the step fails with the violations as its reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from alphadesk.agent import Agent, ModelRetry, RunContext
from alphadesk.agents.fund.models import DeskCall, PortfolioDecision
from alphadesk.agents.fund.tasks import FundTask
from alphadesk.agents.spec import AgentSpec, load_prompt
from alphadesk.llm.rules import RulesPolicy, Transcript
from alphadesk.portfolio.targets import BookLimits, TargetWeight, check_targets

__all__ = ["PORTFOLIO_MANAGER", "FundDeps", "rules_targets"]

_PKG = "alphadesk.agents.fund"
_RESERVE = 0.005  # of the NAV, besides the costs of a full turnover, left in cash


@dataclass(frozen=True)
class FundDeps:
    """The book the targets are checked against: shares by symbol, cash, prices, limits,
    and the symbols the desks decided (each must be given a weight)."""

    holdings: Mapping[str, float]
    cash: float
    prices: Mapping[str, float]
    limits: BookLimits
    symbols: tuple[str, ...]


def within_the_limits(ctx: RunContext[FundDeps], output: PortfolioDecision) -> PortfolioDecision:
    """Refuse targets that break a limit or the cash, or leave out a desk's symbol."""
    deps = ctx.deps
    problems = check_targets(output.targets, deps.holdings, deps.cash, deps.prices, deps.limits)
    named = {t.symbol for t in output.targets}
    missing = [s for s in deps.symbols if s not in named]
    if missing:
        problems.append(f"no weight for {', '.join(missing)}: name every symbol the desks decided")
    if problems:
        listed = "\n".join(f"- {p}" for p in problems)
        raise ModelRetry(f"These target weights break the book's limits:\n{listed}")
    return output


@dataclass
class _Line:
    """One name while the rule works: its weight now, its target and the reason."""

    call: DeskCall
    now: float
    target: float
    reason: str
    required: bool = False  # a cut to the cap: never scaled, never skipped

    @property
    def move(self) -> float:
        return self.target - self.now


def _start(call: DeskCall, now: float, cap: float) -> _Line:
    """Step 2 (and 3's floor): the name's weight before the BUYs are sized."""
    kept = min(now, cap)
    cut = f", cut to the cap {cap:.4f}" if now > cap else ""
    if call.decision == "SELL":
        return _Line(call, now, 0.0, "desk SELL: sold in full" if now else "desk SELL: none held")
    if call.decision == "failed":
        why = call.rationale[:200] or "no reason given"
        return _Line(call, now, kept, f"desk failed ({why}): no decision, weight kept{cut}",
                     required=now > cap)  # fmt: skip
    if call.decision == "HOLD":
        return _Line(call, now, kept, f"desk HOLD: weight {now:.4f} kept{cut}", required=now > cap)
    return _Line(call, now, kept, "", required=now > cap)


def _size_buys(lines: list[_Line], budget: float, cap: float) -> None:
    """Step 3: an equal share of what is left, times conviction, at most the cap."""
    buys = [line for line in lines if line.call.decision == "BUY"]
    if not buys:
        return
    fixed = sum(line.target for line in lines if line.call.decision != "BUY")
    share = max(0.0, budget - fixed) / len(buys)
    for line in buys:
        conviction = line.call.conviction or 0.0
        sized = min(cap, share * conviction)
        line.target = max(line.target, sized)
        line.reason = (
            f"desk BUY at conviction {conviction:.2f}: {conviction:.2f} x an equal share "
            f"{share:.4f} of the long budget"
            + (f", at most the cap {cap:.4f}" if share * conviction > cap else "")
        )
    _scale_increases(buys, budget - fixed - sum(min(b.now, cap) for b in buys), "the budget")


def _scale_increases(lines: list[_Line], room: float, why: str) -> None:
    """Every increase among ``lines`` scaled alike so that together they fit in ``room``."""
    ups = [line for line in lines if line.move > 0 and not line.required]
    total = sum(line.move for line in ups)
    if total <= room or total <= 0:
        return
    scale = max(0.0, room) / total * (1 - 1e-9)
    for line in ups:
        line.target = line.now + line.move * scale
        line.reason += f"; scaled to {scale:.0%} to fit {why}"


def _forced(line: _Line, cap: float) -> float:
    """The part of a cut that brings a name above the cap down to it: made in full."""
    return min(0.0, cap - line.now) if line.move < 0 and not line.required else 0.0


def _fit_turnover(lines: list[_Line], limits: BookLimits) -> None:
    """Step 4: moves beyond the turnover cap scaled down alike, save cuts to the cap (a
    sale of a name above the cap is scaled only below the cap)."""
    cap = limits.max_weight
    free = [line for line in lines if not line.required and line.move]
    fixed = sum(abs(line.move) for line in lines if line.required)
    fixed += sum(abs(_forced(line, cap)) for line in free)
    total = sum(abs(line.move - _forced(line, cap)) for line in free)
    room = limits.max_turnover - fixed
    if total <= room:
        return
    scale = max(0.0, room) / total * (1 - 1e-9)
    for line in free:
        forced = _forced(line, cap)
        line.target = line.now + forced + (line.move - forced) * scale
        line.reason += f"; moved {scale:.0%} of the way (turnover cap {limits.max_turnover:.0%})"


def _skip_small(lines: list[_Line], limits: BookLimits, nav: float) -> None:
    """Step 4: a move below the minimum trade is not made, save a close or a cut to the
    cap."""
    for line in lines:
        closes = line.target == 0 and line.now > 0
        cut = line.now > limits.max_weight >= line.target
        exempt = closes or cut or line.required
        if line.move and abs(line.move) * nav < limits.min_trade and not exempt:
            line.target = line.now
            line.reason += f"; the move is below the minimum trade, so weight {line.now:.4f} kept"


def _fit_cash(lines: list[_Line], task: FundTask) -> None:
    """Step 4: if the buys need more cash than the book has after the sales and costs,
    every increase is scaled down alike until they fit."""
    limits, nav = task.limits, task.nav
    moves = sum(line.move for line in lines)
    costs = sum(abs(line.move) for line in lines) * limits.cost_rate
    left = task.cash / nav - moves - costs  # as a fraction of the NAV
    short = limits.cash_floor(nav) / nav - left
    if short <= 0:
        return
    ups = sum(line.move for line in lines if line.move > 0 and not line.required)
    room = ups - short / (1 - limits.cost_rate) - 1e-9
    _scale_increases(lines, room, "the cash")
    _skip_small(lines, limits, nav)


def rules_targets(task: FundTask) -> PortfolioDecision:
    """The rule of this module's docstring, on ``task``."""
    limits, cap = task.limits, task.limits.max_weight
    symbols = {call.symbol for call in task.desks}
    others = sum(abs(h.weight) for h in task.holdings if h.symbol not in symbols)
    reserve = _RESERVE + limits.cost_rate * limits.max_turnover
    budget = max(0.0, min(1.0, limits.max_gross) - others - reserve)
    lines = [_start(call, task.weight(call.symbol), cap) for call in task.desks]
    _size_buys(lines, budget, cap)
    _fit_turnover(lines, limits)
    _skip_small(lines, limits, task.nav)
    _fit_cash(lines, task)
    decided = {d: sum(line.call.decision == d for line in lines) for d in ("BUY", "HOLD", "SELL")}
    targets = [
        TargetWeight(symbol=line.call.symbol, weight=line.target, reason=line.reason)
        for line in lines
    ]
    invested = sum(t.weight for t in targets) + others
    return PortfolioDecision(
        targets=targets,
        rationale=(
            f"{decided['BUY']} BUY, {decided['HOLD']} HOLD, {decided['SELL']} SELL: the BUYs "
            f"share a long budget of {budget:.4f} by conviction, at most {cap:.4f} a name; "
            f"{invested:.4f} of the NAV invested after the rebalance."
        ),
    )


def _decide(t: Transcript) -> PortfolioDecision:
    return rules_targets(t.task_as(FundTask))


PORTFOLIO_MANAGER: AgentSpec[FundDeps, PortfolioDecision] = AgentSpec(
    agent=Agent(
        name="portfolio_manager",
        max_tokens=2_000,
        instructions=load_prompt(_PKG, "manager_system").template,
        output_type=PortfolioDecision,
        output_validators=(within_the_limits,),
    ),
    policy=RulesPolicy(plan=[], decide=_decide, name="portfolio_manager"),
    tier="deep",
    turns={"quick": 1, "standard": 2, "deep": 3},
)

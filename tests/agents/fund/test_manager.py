"""The portfolio manager: its rule worked by hand on a mixed book, its targets within the
limits over random decisions and books, and a model's violating answer sent back with the
violations listed, until it keeps them or the step fails naming them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Literal

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from alphadesk.agent import Completed, RunScope
from alphadesk.agents.fund import PORTFOLIO_MANAGER, DeskCall, FundDeps, FundTask, Holding
from alphadesk.agents.fund.manager import rules_targets
from alphadesk.llm.messages import Message, UserMessage, text_of
from alphadesk.llm.testing import FunctionModel
from alphadesk.portfolio.targets import BookLimits, check_targets, nav_of

AS_OF = datetime(2025, 5, 15, 20, tzinfo=UTC)
Decision = Literal["BUY", "HOLD", "SELL", "failed"]


def _why(decision: Decision) -> str:
    return "the desk failed at judge" if decision == "failed" else "reasons"


def _task(
    calls: Sequence[tuple[str, Decision, float | None]],
    holdings: dict[str, float],
    cash: float,
    prices: dict[str, float],
    limits: BookLimits,
) -> FundTask:
    nav = nav_of(cash, holdings, prices)
    return FundTask(
        as_of=AS_OF,
        desks=[
            DeskCall(symbol=s, decision=d, conviction=c, price=prices[s], rationale=_why(d))
            for s, d, c in calls
        ],
        holdings=[
            Holding(symbol=s, shares=q, price=prices[s], weight=q * prices[s] / nav)
            for s, q in holdings.items()
        ],
        cash=cash,
        nav=nav,
        limits=limits,
    )


PRICES = {"AAPL": 200.0, "JPM": 250.0, "PG": 160.0, "KO": 60.0, "MSFT": 400.0}
# $20,000 JPM, $16,000 PG, $30,000 KO (above the 0.25 cap) and $34,000 cash: NAV $100,000
HOLDINGS = {"JPM": 80.0, "PG": 100.0, "KO": 500.0}
CALLS: list[tuple[str, Decision, float | None]] = [
    ("AAPL", "BUY", 0.5),
    ("JPM", "HOLD", 0.4),
    ("PG", "SELL", 0.7),
    ("KO", "failed", None),
    ("MSFT", "BUY", 0.3),
]


def test_the_rule_worked_by_hand_on_a_mixed_book() -> None:
    limits = BookLimits()  # cap 0.25, $100 minimum, turnover 100 %, 1 bp
    decision = rules_targets(_task(CALLS, HOLDINGS, 34_000.0, PRICES, limits))
    got = {t.symbol: t.weight for t in decision.targets}
    # budget 1 - 0.005 - 0.0001 = 0.9949; fixed JPM 0.20 + PG 0 + KO 0.25 (cut to the cap);
    # each BUY's share (0.9949 - 0.45) / 2 = 0.27245, times its conviction
    assert got == pytest.approx(
        {"AAPL": 0.136225, "JPM": 0.20, "PG": 0.0, "KO": 0.25, "MSFT": 0.081735}
    )
    reasons = {t.symbol: t.reason for t in decision.targets}
    assert reasons["KO"] == (
        "desk failed (the desk failed at judge): no decision, weight kept, cut to the cap 0.2500"
    )
    assert reasons["PG"] == "desk SELL: sold in full"
    assert reasons["AAPL"].startswith("desk BUY at conviction 0.50: 0.50 x an equal share 0.2724")
    assert check_targets(decision.targets, HOLDINGS, 34_000.0, PRICES, limits) == []


def test_the_turnover_cap_scales_every_move_but_the_cut_to_the_cap() -> None:
    limits = BookLimits(max_turnover=0.2)
    decision = rules_targets(_task(CALLS, HOLDINGS, 34_000.0, PRICES, limits))
    got = {t.symbol: t.weight for t in decision.targets}
    assert got["KO"] == pytest.approx(0.25)  # the cut is made whole
    moved = abs(got["AAPL"]) + abs(got["MSFT"]) + abs(got["PG"] - 0.16) + 0.05
    assert moved == pytest.approx(0.2)
    assert got["AAPL"] / got["MSFT"] == pytest.approx(0.5 / 0.3)  # scaled alike
    assert check_targets(decision.targets, HOLDINGS, 34_000.0, PRICES, limits) == []


SYMBOLS = list(PRICES)
calls_st = st.lists(
    st.tuples(st.sampled_from(["BUY", "HOLD", "SELL", "failed"]), st.floats(0, 1) | st.none()),
    min_size=len(SYMBOLS),
    max_size=len(SYMBOLS),
)
limits_st = st.builds(
    BookLimits,
    max_weight=st.floats(0.05, 1.0),
    max_gross=st.floats(1.0, 2.0),
    min_trade=st.floats(0, 5_000),
    max_turnover=st.floats(0.05, 2.0),
    cost_bps=st.floats(0, 100),
)


@settings(max_examples=300, deadline=None)
@given(
    calls_st,
    st.integers(1, len(SYMBOLS)),
    st.dictionaries(st.sampled_from(SYMBOLS), st.integers(0, 3_000).map(float)),
    st.floats(0, 500_000),
    st.fixed_dictionaries({s: st.floats(1.0, 2_000.0) for s in SYMBOLS}),
    limits_st,
)
def test_over_random_decisions_and_books_the_rule_keeps_every_limit(
    decided: list[tuple[Decision, float | None]],
    named: int,
    holdings: dict[str, float],
    cash: float,
    prices: dict[str, float],
    limits: BookLimits,
) -> None:
    nav = nav_of(cash, holdings, prices)
    assume(nav > 1_000)
    symbols = SYMBOLS[:named]  # the other names held stay outside the desks' decisions
    cuts = sum(
        max(0.0, holdings.get(s, 0.0) * prices[s] / nav - limits.max_weight) for s in symbols
    )
    assume(cuts <= limits.max_turnover)  # else no rule can keep both limits
    calls = [(s, d, c) for s, (d, c) in zip(symbols, decided, strict=False)]
    decision = rules_targets(_task(calls, holdings, cash, prices, limits))
    assert [t.symbol for t in decision.targets] == symbols
    assert check_targets(decision.targets, holdings, cash, prices, limits) == []
    for target, (symbol, choice, _) in zip(decision.targets, calls, strict=True):
        now = holdings.get(symbol, 0.0) * prices[symbol] / nav
        if choice == "SELL":  # all of it, or part of the way under the turnover cap
            assert target.weight <= now
        if choice in ("HOLD", "failed"):
            assert target.weight == pytest.approx(min(now, limits.max_weight))


def _run(responder: Any, task: FundTask, deps: FundDeps) -> Any:
    model = FunctionModel(responder, name="scripted")
    agent = PORTFOLIO_MANAGER.agent
    scope = RunScope(as_of=AS_OF)
    return asyncio.run(agent.run(model, task.message(), deps=deps, scope=scope))


def _deps(limits: BookLimits) -> FundDeps:
    return FundDeps(HOLDINGS, 34_000.0, PRICES, limits, tuple(s for s, _, _ in CALLS))


def _answer(weights: dict[str, float]) -> str:
    targets = [{"symbol": s, "weight": w, "reason": "my view"} for s, w in weights.items()]
    return json.dumps({"targets": targets, "rationale": "a book"})


def _feedback(messages: Sequence[Message]) -> list[str]:
    return [text_of(m.content) for m in messages[2:] if isinstance(m, UserMessage)]


def test_a_violating_answer_goes_back_with_its_violations_until_it_keeps_them() -> None:
    limits = BookLimits()
    task = _task(CALLS, HOLDINGS, 34_000.0, PRICES, limits)
    heard: list[list[str]] = []
    good = {"AAPL": 0.1, "JPM": 0.2, "PG": 0.0, "KO": 0.25, "MSFT": 0.1}

    def respond(messages: Sequence[Message], *_: Any) -> str:
        heard.append(_feedback(messages))
        return _answer(good | {"AAPL": 0.4} if len(heard) == 1 else good)

    result = _run(respond, task, _deps(limits))
    assert isinstance(result.outcome, Completed)
    assert {t.symbol: t.weight for t in result.output.targets} == good
    (retry,) = heard[1]
    assert "AAPL: weight 0.4000 is above the cap of 0.2500 per name; give at most 0.2500" in retry


def test_after_the_last_retry_the_step_fails_naming_the_violations() -> None:
    limits = BookLimits()
    task = _task(CALLS, HOLDINGS, 34_000.0, PRICES, limits)
    answers = 0

    def respond(messages: Sequence[Message], *_: Any) -> str:
        nonlocal answers
        answers += 1
        return _answer({"AAPL": 0.2, "JPM": -0.1})

    result = _run(respond, task, _deps(limits))
    assert result.outcome.kind == "no_valid_output"
    assert "JPM: weight -0.1000 is a short sale" in result.outcome.reason
    assert "no weight for PG, KO, MSFT" in result.outcome.reason
    assert answers == 1 + PORTFOLIO_MANAGER.agent.output_retries


def test_the_prompt_shows_the_desks_the_book_and_the_limits() -> None:
    text = _task(CALLS, HOLDINGS, 34_000.0, PRICES, BookLimits()).render()
    assert "The book as of 2025-05-15" in text
    assert '"decision": "failed"' in text and '"symbol": "KO"' in text
    assert "Cash: 34000.00. NAV (cash and holdings at these prices): 100000.00." in text
    assert "at most 25% of the NAV per name, no short sales, no leverage" in text
    assert "$" not in text.replace("$100.00", "")

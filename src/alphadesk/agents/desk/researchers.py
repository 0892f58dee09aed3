"""The bull and bear researchers (one factory, two stances) and the research manager.

A researcher argues its side from the analysts' evidence and weighs lessons of similar past
situations; in the same round it then answers the other side's argument point by point,
each point against a fact of its own or conceded. The manager (deep tier) reads the debate
and writes the investment plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from alphadesk.agent import Agent
from alphadesk.agents.desk.deps import DeskDeps
from alphadesk.agents.desk.lessons import lesson_line, past_move
from alphadesk.agents.desk.models import Action, DebateTurn, Evidence, InvestmentPlan, Signal
from alphadesk.agents.desk.scoring import clamp, net_score
from alphadesk.agents.desk.tasks import ManagerTask, RebuttalTask, ResearcherTask
from alphadesk.agents.desk.validators import cites_the_facts
from alphadesk.agents.spec import AgentSpec, load_prompt
from alphadesk.llm.rules import RulesPolicy, Transcript

__all__ = ["BEAR", "BULL", "MANAGER", "Stance", "researcher"]

Stance = Literal["bull", "bear"]
_PKG = "alphadesk.agents.desk"
_POINTS = 4
_CONCESSION = 0.05  # conviction given up per point conceded, or to a more convinced opponent
_LESSON_WEIGHT = 0.05
_NET_WEIGHT = 0.8  # how far the analysts' net view moves a researcher from 0.5
_DECISIVE = 0.12  # net view beyond which the manager takes a side


@dataclass(frozen=True)
class _Side:
    sign: int
    lean: Signal
    opponent: Stance
    goal: str


_SIDES: dict[Stance, _Side] = {
    "bull": _Side(1, "bullish", "bear", "build the strongest case for buying the stock"),
    "bear": _Side(-1, "bearish", "bull", "build the strongest case against owning the stock"),
}


def _evidence(briefing: dict[str, Any], lean: Signal) -> list[Evidence]:
    return [
        Evidence.model_validate(item)
        for report in briefing.values()
        for item in report["evidence"]
        if item["lean"] == lean
    ]


def _rebuttal(side: _Side, opponent: dict[str, Any] | None, own: list[Evidence]) -> str | None:
    if not opponent:
        return None
    theirs = opponent.get("evidence") or []
    if not theirs:
        return f"The {side.opponent} case cites no fact."
    top = theirs[0]
    answer = f"but {own[0].reading} ({own[0].fact} {own[0].value:g})" if own else "and I concede it"
    return (
        f"The {side.opponent} leans on {top['reading']} ({top['fact']} {top['value']:g}), {answer}."
    )


def _argue(stance: Stance, t: Transcript) -> DebateTurn:
    side = _SIDES[stance]
    task = t.task_as(ResearcherTask)
    briefing, opponent, memories = task.briefing, task.opponent_turn, task.memories
    own = _evidence(briefing, side.lean)[:_POINTS]
    conviction = 0.5 + _NET_WEIGHT * side.sign * net_score(briefing)
    lessons = [m for m in memories if past_move(m) == side.sign]
    conviction += _LESSON_WEIGHT * len(lessons[:2])
    if opponent and float(opponent.get("conviction", 0)) > conviction:
        conviction -= _CONCESSION
    points = "; ".join(f"{e.reading} ({e.fact} {e.value:g})" for e in own)
    argument = (
        f"The {stance} case: {points}." if own else f"No analyst's evidence favours the {stance}."
    )
    if lessons:
        argument += " Memory: " + "; ".join(lesson_line(m) for m in lessons[:2]) + "."
    return DebateTurn(
        argument=argument,
        evidence=own,
        rebuttal=_rebuttal(side, opponent, own),
        conviction=round(clamp(conviction, 0.05, 0.95), 2),
    )


def _answer(point: dict[str, Any], own: list[Evidence]) -> Evidence | None:
    """The unused fact of mine that answers ``point``: one from the same analyst first."""
    source = str(point["fact"]).split(".")[0]
    same = [e for e in own if e.fact.split(".")[0] == source]
    return next(iter(same or own), None)


def _rebut(stance: Stance, t: Transcript) -> DebateTurn:
    """Answer the other side's argument of this round, point by point, from the facts:
    each of its points against a fact of mine (from the same analyst where I have one), or
    conceded; each point conceded costs conviction."""
    side = _SIDES[stance]
    task = t.task_as(RebuttalTask)
    mine, theirs = task.own_turn, task.opponent_turn
    unused = [Evidence.model_validate(e) for e in mine.get("evidence") or []]
    points = (theirs.get("evidence") or [])[:_POINTS]
    replies: list[str] = []
    conceded = 0
    for point in points:
        cited = f"The {side.opponent} cites {point['reading']} ({point['fact']} {point['value']:g})"
        answer = _answer(point, unused)
        if answer is None:
            conceded += 1
            replies.append(f"{cited}: I concede it.")
            continue
        unused.remove(answer)
        replies.append(f"{cited}; against it, {answer.reading} ({answer.fact} {answer.value:g}).")
    if not points:
        replies = [f"The {side.opponent}'s argument cites no fact: nothing on the sheet to answer."]
    conviction = float(mine["conviction"]) - _CONCESSION * conceded
    evidence = [Evidence.model_validate(e) for e in mine.get("evidence") or []]
    return DebateTurn(
        argument=f"After the {side.opponent}'s argument the {stance} case stands on "
        f"{_count(len(evidence), 'fact')}; of the {side.opponent}'s "
        f"{_count(len(points), 'point')}, {len(points) - conceded} answered, {conceded} conceded.",
        evidence=evidence,
        rebuttal=" ".join(replies),
        conviction=round(clamp(conviction, 0.05, 0.95), 2),
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _speak(stance: Stance, t: Transcript) -> DebateTurn:
    """A researcher's turn: its argument, or its rebuttal of the other side's argument."""
    return _rebut(stance, t) if isinstance(t.task, RebuttalTask) else _argue(stance, t)


def researcher(stance: Stance) -> AgentSpec[DeskDeps, DebateTurn]:
    """The researcher arguing ``stance``: the same agent, prompt and policy for both sides."""
    side = _SIDES[stance]
    instructions = load_prompt(_PKG, "researcher_system").substitute(
        stance=stance, opponent=side.opponent, goal=side.goal, lean=side.lean
    )
    return AgentSpec(
        agent=Agent(
            name=stance,
            max_tokens=900,
            instructions=instructions,
            output_type=DebateTurn,
            output_validators=(cites_the_facts,),
        ),
        policy=RulesPolicy(plan=[], decide=partial(_speak, stance), name=stance),
        turns={"quick": 1, "standard": 2, "deep": 3},
    )


def _plan(t: Transcript) -> InvestmentPlan:
    task = t.task_as(ManagerTask)
    briefing, debate = task.briefing, task.debate
    last = {turn["speaker"]: turn for turn in debate}
    bull = float(last.get("bull", {}).get("conviction", 0.5))
    bear = float(last.get("bear", {}).get("conviction", 0.5))
    view = 0.6 * net_score(briefing) + 0.2 * (bull - bear)
    action: Action = "BUY" if view >= _DECISIVE else "SELL" if view <= -_DECISIVE else "HOLD"
    winner = "bull" if bull - bear > 0.05 else "bear" if bear - bull > 0.05 else "balanced"
    cited = (last.get(winner) or {}).get("evidence", [])[:3]
    return InvestmentPlan(
        recommendation=action,
        confidence=round(min(0.95, 0.35 + abs(view)), 2),
        winning_side=winner,
        rationale=f"Net analyst view {net_score(briefing):+.2f}; "
        + _debated(bull, bear, winner, held=bool(debate))
        + f": {action}.",
        evidence=[Evidence.model_validate(e) for e in cited],
        strategic_actions=_actions(action),
    )


def _debated(bull: float, bear: float, winner: str, *, held: bool) -> str:
    if not held:
        return "no debate was held"
    said = "the debate is balanced" if winner == "balanced" else f"the {winner} side wins"
    return f"bull conviction {bull:.2f} against bear {bear:.2f}, {said}"


def _actions(action: Action) -> list[str]:
    if action == "BUY":
        return ["enter near the last close", "place the stop under the nearest support"]
    if action == "SELL":
        return ["exit or go short near the last close", "stop above the nearest resistance"]
    return ["stay out until the evidence agrees"]


MANAGER: AgentSpec[DeskDeps, InvestmentPlan] = AgentSpec(
    agent=Agent(
        name="manager",
        max_tokens=1000,
        instructions=load_prompt(_PKG, "manager_system").template,
        output_type=InvestmentPlan,
        output_validators=(cites_the_facts,),
    ),
    policy=RulesPolicy(plan=[], decide=_plan, name="manager"),
    tier="deep",
    turns={"quick": 1, "standard": 2, "deep": 3},
)

BULL = researcher("bull")
BEAR = researcher("bear")

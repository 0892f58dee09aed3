"""The risk team: risky, safe and neutral analysts (one factory, three personas) and the
risk judge (deep tier) whose decision is final.

Each analyst sizes the trader's proposal to its appetite; in the same round it then
answers the other two's views, each against its own limits, and moves toward their sizes
(again in each later round). The judge takes the median of each analyst's last size; a
position two analysts oppose, or one sized to nothing, becomes a reasoned HOLD (a
decision, not a failure).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from alphadesk.agent import Agent
from alphadesk.agents.desk.deps import DeskDeps
from alphadesk.agents.desk.lessons import contrary_lessons
from alphadesk.agents.desk.models import Evidence, FinalDecision, RiskView
from alphadesk.agents.desk.tasks import JudgeTask, RiskRebuttalTask, RiskTask
from alphadesk.agents.desk.validators import cites_the_facts, position_lies_in_range
from alphadesk.agents.spec import AgentSpec, load_prompt
from alphadesk.llm.rules import RulesPolicy, Transcript

__all__ = ["JUDGE", "NEUTRAL", "RISKY", "SAFE", "Persona", "risk_analyst"]

Persona = Literal["risky", "safe", "neutral"]
_PKG = "alphadesk.agents.desk"
_CONVERGENCE = 0.25  # share of the gap to the others' mean closed on hearing them
_MIN_SIZE = 0.02  # below this a position is not worth its costs
_MEMORY_CUT = 0.75


@dataclass(frozen=True)
class _Appetite:
    scale: float  # times the trader's size
    max_atr_pct: float  # daily range (ATR, % of price) beyond which it stays out
    min_conviction: float  # below which it stays out
    attitude: str


_PERSONAS: dict[Persona, _Appetite] = {
    "risky": _Appetite(1.5, 12.0, 0.2, "champion high-reward opportunities and bold sizing"),
    "safe": _Appetite(0.5, 5.0, 0.45, "protect capital first: smaller size, tighter risk"),
    "neutral": _Appetite(1.0, 8.0, 0.35, "balance reward against risk with moderate sizing"),
}


def _volatility(facts: dict[str, float]) -> tuple[str, float] | None:
    for name in ("market.atr_pct", "market.hv_20"):
        if name in facts:
            value = facts[name] if name.endswith("atr_pct") else facts[name] / 16  # daily
            return name, value
    return None


def _size(persona: Persona, proposal: dict[str, Any], facts: dict[str, float]) -> tuple[float, str]:
    appetite = _PERSONAS[persona]
    if proposal["action"] == "HOLD":
        return 0.0, "no position proposed; nothing to size"
    vol = _volatility(facts)
    if vol is not None and vol[1] > appetite.max_atr_pct:
        return 0.0, f"daily range {vol[1]:.1f}% of price is beyond my {appetite.max_atr_pct}% limit"
    if float(proposal["conviction"]) < appetite.min_conviction:
        return 0.0, f"conviction {proposal['conviction']} is below my {appetite.min_conviction}"
    size = min(1.0, float(proposal["size_fraction"]) * appetite.scale)
    return round(size, 2), f"{appetite.scale:g}x the trader's size suits a {persona} book"


def _converge(size: float, others: dict[str, Any]) -> float:
    """``size`` moved toward the others' mean; a limit that keeps me out does not bend."""
    if size <= 0 or not others:
        return size
    mean = statistics.fmean(float(v["recommended_size"]) for v in others.values())
    return round(size + _CONVERGENCE * (mean - size), 2)


def _stance(size: float, proposal: dict[str, Any]) -> str:
    proposed = float(proposal["size_fraction"])
    return "support" if abs(size - proposed) < 0.01 else "oppose" if size == 0 else "adjust"


def _cited(facts: dict[str, float]) -> list[Evidence]:
    vol = _volatility(facts)
    if vol is None:
        return []
    return [Evidence(fact=vol[0], value=facts[vol[0]], lean="neutral", reading="volatility")]


def _view(persona: Persona, t: Transcript) -> RiskView:
    task = t.task_as(RiskTask)
    proposal, facts, others = task.proposal, task.facts, task.others or {}
    size, why = _size(persona, proposal, facts)
    size = _converge(size, others)
    rebuttal = _replies(persona, size, others) if others else None
    return RiskView(
        stance=_stance(size, proposal),
        recommended_size=size,
        argument=f"As the {persona} analyst I {_PERSONAS[persona].attitude}: {why}; "
        f"recommend {size:.2f} of capital.",
        evidence=_cited(facts),
        rebuttal=rebuttal,
    )


def _reply(persona: Persona, mine: float, name: str, view: dict[str, Any]) -> str:
    """My answer to one other analyst: its size and the fact it cites, against my limits."""
    theirs = float(view["recommended_size"])
    said = f"{name} recommends {theirs:.2f} ({view['stance']})"
    cited = view.get("evidence") or []
    limit = _PERSONAS[persona].max_atr_pct
    for item in cited:
        said += f", citing {item['reading']} ({item['fact']} {float(item['value']):g})"
        vol = _volatility({str(item["fact"]): float(item["value"])})
        if vol is not None:
            within = "within" if vol[1] <= limit else "beyond"
            said += f": a daily range of {vol[1]:.1f}% of price, {within} my {limit:g}% limit"
    if mine == 0:
        return said + "; I stay out"
    if abs(theirs - mine) < 0.01:
        return said + "; we agree"
    return said + ("; I come down toward it" if theirs < mine else "; I go up toward it")


def _replies(persona: Persona, mine: float, others: dict[str, Any]) -> str:
    return "; ".join(_reply(persona, mine, n, v) for n, v in sorted(others.items())) + "."


def _rebut_view(persona: Persona, t: Transcript) -> RiskView:
    """Answer the other two's views of this round, each against my own limits, and move
    toward their sizes."""
    task = t.task_as(RiskRebuttalTask)
    own, others = task.own_view, task.others
    before = float(own["recommended_size"])
    size = _converge(before, others)
    moved = f"move from {before:.2f} to {size:.2f}" if size != before else f"stay at {size:.2f}"
    return RiskView(
        stance=_stance(size, task.proposal),
        recommended_size=size,
        argument=f"{own['argument']} Having heard {' and '.join(sorted(others))}, I {moved}.",
        evidence=[Evidence.model_validate(e) for e in own.get("evidence") or []],
        rebuttal=_replies(persona, before, others),
    )


def _speak(persona: Persona, t: Transcript) -> RiskView:
    """A risk analyst's turn: its view, or its answer to the other two's."""
    if isinstance(t.task, RiskRebuttalTask):
        return _rebut_view(persona, t)
    return _view(persona, t)


def risk_analyst(persona: Persona) -> AgentSpec[DeskDeps, RiskView]:
    """The risk analyst of ``persona``: one agent, prompt and policy for all three."""
    instructions = load_prompt(_PKG, "risk_system").substitute(
        persona=persona, attitude=_PERSONAS[persona].attitude
    )
    return AgentSpec(
        agent=Agent(
            name=persona,
            max_tokens=900,
            instructions=instructions,
            output_type=RiskView,
            output_validators=(cites_the_facts,),
        ),
        policy=RulesPolicy(plan=[], decide=partial(_speak, persona), name=persona),
        turns={"quick": 1, "standard": 2, "deep": 3},
    )


def _judge(t: Transcript) -> FinalDecision:
    task = t.task_as(JudgeTask)
    proposal, plan, debate, memories = task.proposal, task.plan, task.risk_debate, task.memories
    views = list({turn["speaker"]: turn for turn in debate}.values())  # each one's last say
    # With no risk round the trader's own size stands.
    sizes = [float(v["recommended_size"]) for v in views] or [float(proposal["size_fraction"])]
    size = statistics.median(sizes)
    sized_by = "the risk team's median size" if views else "the trader's size (no risk round)"
    opposed = sum(v["stance"] == "oppose" for v in views)
    notes = [f"{v['speaker']}: {v['argument']}" for v in views if v["stance"] != "support"]
    warnings = contrary_lessons(memories, proposal["action"])
    if warnings:
        size *= _MEMORY_CUT
        notes += [f"memory: {w}" for w in warnings[:2]]
    action = proposal["action"]
    if action != "HOLD" and (opposed >= 2 or size < _MIN_SIZE):
        why = (
            f"{opposed} of {len(views)} risk analysts oppose" if opposed >= 2 else "size too small"
        )
        return _hold(proposal, plan, f"The trader proposed {action}, but {why}: HOLD.", notes)
    levels = {k: proposal.get(k) for k in ("entry", "stop", "target")}
    return FinalDecision(
        action=action,
        size_fraction=round(size, 2) if action != "HOLD" else 0.0,
        horizon_days=proposal["horizon_days"],
        conviction=round((float(proposal["conviction"]) + float(plan["confidence"])) / 2, 2),
        rationale=f"{action} at {round(size, 2):.2f} of capital, {sized_by}. {plan['rationale']}",
        evidence=[Evidence.model_validate(e) for e in proposal.get("evidence") or []],
        risk_notes=notes,
        **(levels if action != "HOLD" else {}),
    )


def _hold(
    proposal: dict[str, Any], plan: dict[str, Any], why: str, notes: list[str]
) -> FinalDecision:
    return FinalDecision(
        action="HOLD",
        size_fraction=0.0,
        horizon_days=proposal["horizon_days"],
        conviction=round(float(plan["confidence"]) / 2, 2),
        rationale=why,
        risk_notes=notes,
    )


JUDGE: AgentSpec[DeskDeps, FinalDecision] = AgentSpec(
    agent=Agent(
        name="judge",
        max_tokens=1000,
        instructions=load_prompt(_PKG, "judge_system").template,
        output_type=FinalDecision,
        output_validators=(position_lies_in_range,),
    ),
    policy=RulesPolicy(plan=[], decide=_judge, name="judge"),
    tier="deep",
    turns={"quick": 1, "standard": 2, "deep": 3},
)

RISKY = risk_analyst("risky")
SAFE = risk_analyst("safe")
NEUTRAL = risk_analyst("neutral")

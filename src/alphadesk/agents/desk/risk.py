"""The risk team: risky, safe and neutral analysts (one factory, three personas) and the
risk judge (deep tier) whose decision is final.

Each analyst sizes the trader's proposal to its appetite and, after the first round, moves
toward the others' last views. The judge takes the median size; a position two analysts
oppose, or one sized to nothing, becomes a reasoned HOLD (a decision, not a failure).
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
from alphadesk.agents.desk.tasks import JudgeTask, RiskTask
from alphadesk.agents.desk.validators import cites_the_facts, position_lies_in_range
from alphadesk.agents.spec import AgentSpec, load_prompt
from alphadesk.llm.rules import RulesPolicy, Transcript

__all__ = ["JUDGE", "NEUTRAL", "RISKY", "SAFE", "Persona", "risk_analyst"]

Persona = Literal["risky", "safe", "neutral"]
_PKG = "alphadesk.agents.desk"
_CONVERGENCE = 0.25  # share of the gap to the others' mean closed each later round
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


def _view(persona: Persona, t: Transcript) -> RiskView:
    task = t.task_as(RiskTask)
    proposal, facts, others = task.proposal, task.facts, task.others or {}
    size, why = _size(persona, proposal, facts)
    rebuttal = None
    if others:
        mean = statistics.fmean(float(v["recommended_size"]) for v in others.values())
        if size > 0:  # a limit that keeps me out does not bend
            size = round(size + _CONVERGENCE * (mean - size), 2)
        rebuttal = "; ".join(
            f"{name} wants {float(v['recommended_size']):.2f} ({v['stance']})"
            for name, v in sorted(others.items())
        )
    proposed = float(proposal["size_fraction"])
    stance = "support" if abs(size - proposed) < 0.01 else "oppose" if size == 0 else "adjust"
    vol = _volatility(facts)
    cited = (
        [Evidence(fact=vol[0], value=facts[vol[0]], lean="neutral", reading="volatility")]
        if vol
        else []
    )
    return RiskView(
        stance=stance,
        recommended_size=size,
        argument=f"As the {persona} analyst I {_PERSONAS[persona].attitude}: {why}; "
        f"recommend {size:.2f} of capital.",
        evidence=cited,
        rebuttal=rebuttal,
    )


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
        policy=RulesPolicy(plan=[], decide=partial(_view, persona), name=persona),
        turns={"quick": 1, "standard": 2, "deep": 3},
    )


def _judge(t: Transcript) -> FinalDecision:
    task = t.task_as(JudgeTask)
    proposal, plan, debate, memories = task.proposal, task.plan, task.risk_debate, task.memories
    last_round = max((turn["round"] for turn in debate), default=0)
    views = [turn for turn in debate if turn["round"] == last_round]
    size = statistics.median([float(v["recommended_size"]) for v in views]) if views else 0.0
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
        rationale=f"{action} at {round(size, 2):.2f} of capital, the risk team's median "
        f"size. {plan['rationale']}",
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

"""The quality gate and its two sub-agents: the failure analyst and the trajectory analyst.

The numbers (fuzzy scores in and out of sample, trajectory statistics, the trial figures:
deflated Sharpe ratio and PBO) are computed by the pipeline and given in the tasks; these
agents classify and route. The gate's output is checked against the numbers: SUCCESS for
a variant that does not meet the goal both in-sample and out-of-sample, or that the trial
figures refuse (an overfit one either way), goes back to the model as a retry.
"""

from __future__ import annotations

from typing import Any

from alphadesk.agent import Agent, ModelRetry, RunContext
from alphadesk.agents.algo.deps import AlgoDeps
from alphadesk.agents.algo.models import (
    Decision,
    FailureAnalysis,
    FailureClass,
    GateDecision,
    TrajectoryReading,
)
from alphadesk.agents.algo.tasks import FailureTask, GateTask, TrajectoryTask
from alphadesk.agents.spec import AgentSpec, load_prompt
from alphadesk.llm.rules import RulesPolicy, Transcript

__all__ = ["FAILURE_ANALYST", "QUALITY_GATE", "ROUTES", "TRAJECTORY_ANALYST"]

_PKG = "alphadesk.agents.algo"
_NEAR = 0.7  # a goal score from which tuning the parameters should close the gap
_HOPELESS = 0.3  # best score after several iterations below which no edge is found
_MAX_REFINEMENTS = 3
ROUTES: dict[FailureClass, Decision] = {
    "PARAMETER_ISSUE": "TUNE",
    "ALGORITHM_BUG": "FIX",
    "DESIGN_FLAW": "REFINE",
    "RESEARCH_GAP": "RESEARCH",
    "FUNDAMENTAL_IMPOSSIBILITY": "ABANDON",
}


def _line(v: dict[str, Any]) -> str:
    ins, oos = v.get("in_sample") or {}, v.get("out_of_sample") or {}
    return (
        f"{v['variant_id']} {v['name']}: in-sample score {ins.get('score', 0):.2f} "
        f"(unmet: {', '.join(ins.get('unmet') or []) or 'none'}), out-of-sample "
        f"{oos.get('score', 0):.2f}"
    )


# -- failure analysis ------------------------------------------------------------------


def _overfit_by_trials(task: FailureTask) -> FailureAnalysis | None:
    """Overfitting named as the cause: the goal met in and out of sample, the trial
    figures refusing the best variant all the same."""
    trials = task.trials or {}
    passed = [v for v in task.variants if v.get("passed")]
    if not passed or not trials.get("refusal"):
        return None
    return FailureAnalysis(
        classification="DESIGN_FLAW",
        root_cause=f"overfitting: the goal is met in and out of sample, but "
        f"{trials['refusal']}; the figures are luck of the search, not an edge",
        evidence=[
            *(_line(v) for v in passed[:3]),
            f"deflated Sharpe ratio {_share(trials.get('deflated_sharpe'))} (needs above "
            f"{_share(trials.get('min_deflated_sharpe'))}), PBO {_share(trials.get('pbo'))} "
            f"(needs below {_share(trials.get('max_pbo'))}) over {trials.get('trials')} trials",
        ],
        confidence=0.7,
        actions=["try a different approach: more tuning of this one adds trials, not edge"],
    )


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _diagnose(t: Transcript) -> FailureAnalysis:
    task = t.task_as(FailureTask)
    overfit_by_trials = _overfit_by_trials(task)
    if overfit_by_trials is not None:
        return overfit_by_trials
    variants, history, iteration = task.variants, task.history, task.iteration
    broken = [v for v in variants if v.get("error")]
    idle = [
        v for v in variants if not v.get("error") and not (v.get("in_sample") or {}).get("trades")
    ]
    best = max(variants, key=lambda v: v.get("score", 0.0), default=None)
    best_score = float(best.get("score", 0.0)) if best else 0.0
    overfit = [
        v
        for v in variants
        if (v.get("in_sample") or {}).get("passed")
        and not (v.get("out_of_sample") or {}).get("passed")
    ]
    ever = max([best_score, *(float(h.get("best_score", 0.0)) for h in history)])
    approaches = {a for h in history for a in h.get("approaches", [])} | {
        v.get("approach") for v in variants
    }
    cls: FailureClass
    if broken or (idle and len(idle) == len(variants)):
        cls, cause = "ALGORITHM_BUG", "code that failed to run or never traded"
        evidence = [f"{v['variant_id']}: {v['error'][:160]}" for v in broken] or [
            f"{v['variant_id']}: no trade in-sample" for v in idle
        ]
    elif overfit:
        cls, cause = "DESIGN_FLAW", "the goal is met in-sample only: the design overfits"
        evidence = [_line(v) for v in overfit]
    elif best_score >= _NEAR:
        cls, cause = "PARAMETER_ISSUE", f"the best variant is near the goal ({best_score:.2f})"
        evidence = [_line(best)] if best else []
    elif iteration >= 3 and ever < _HOPELESS:
        cls, cause = "FUNDAMENTAL_IMPOSSIBILITY", f"no variant came near in {iteration} iterations"
        evidence = [f"best score ever {ever:.2f}"]
    elif len(approaches - {None}) >= 3 and best_score < 0.5:
        cls, cause = "RESEARCH_GAP", "every approach of the brief falls short"
        evidence = [f"approaches tried: {', '.join(sorted(a for a in approaches if a))}"]
    else:
        cls, cause = "DESIGN_FLAW", f"the approach misses the goal by far ({best_score:.2f})"
        evidence = [_line(best)] if best else ["no variant scored"]
    return FailureAnalysis(
        classification=cls,
        root_cause=cause,
        evidence=evidence or ["no variant"],
        confidence=0.7 if cls in ("ALGORITHM_BUG", "PARAMETER_ISSUE") else 0.5,
        actions=[
            {
                "TUNE": "vary the parameters of the best variant",
                "FIX": "repair the failing code",
                "REFINE": "try a different approach",
                "RESEARCH": "research again for other approaches",
                "ABANDON": "stop: no edge found",
            }[ROUTES[cls]]
        ],
    )


FAILURE_ANALYST: AgentSpec[AlgoDeps, FailureAnalysis] = AgentSpec(
    agent=Agent(
        name="failure_analyst",
        max_tokens=800,
        instructions=load_prompt(_PKG, "failure_system").template,
        output_type=FailureAnalysis,
    ),
    policy=RulesPolicy(plan=[], decide=_diagnose, name="failure_analyst"),
    turns={"quick": 1, "standard": 2, "deep": 3},
)


# -- trajectory ------------------------------------------------------------------------

_NEXT = {"CONVERGING": "CONTINUE", "DIVERGING": "ABANDON"}


def _read_trajectory(t: Transcript) -> TrajectoryReading:
    stats = t.task_as(TrajectoryTask).trajectory
    status = stats["status"]
    return TrajectoryReading(
        status=status,
        next_action=_NEXT.get(status, "PIVOT"),
        reasoning=f"best scores {stats.get('scores')}: slope {stats.get('slope'):+.3f} per "
        f"iteration, {stats.get('reversals')} reversal(s)",
    )


TRAJECTORY_ANALYST: AgentSpec[AlgoDeps, TrajectoryReading] = AgentSpec(
    agent=Agent(
        name="trajectory_analyst",
        max_tokens=600,
        instructions=load_prompt(_PKG, "trajectory_system").template,
        output_type=TrajectoryReading,
    ),
    policy=RulesPolicy(plan=[], decide=_read_trajectory, name="trajectory_analyst"),
    turns={"quick": 1, "standard": 2, "deep": 3},
)


# -- the gate --------------------------------------------------------------------------


def _gate(t: Transcript) -> GateDecision:
    task = t.task_as(GateTask)
    variants, failure, trajectory = task.variants, task.failure, task.trajectory
    refinements, trials = task.refinements, task.trials or {}
    winners = [v for v in variants if v.get("passed")]
    ranked = sorted(winners or variants, key=lambda v: v.get("score", 0.0), reverse=True)
    best = ranked[0]["variant_id"] if ranked else None
    if winners and not trials.get("refusal") and trials.get("candidate") == best:
        return GateDecision(
            decision="SUCCESS",
            best_variant=best,
            reasoning=f"{_line(ranked[0])}: every criterion met in and out of sample; "
            f"deflated Sharpe ratio {_share(trials.get('deflated_sharpe'))}, PBO "
            f"{_share(trials.get('pbo'))} over {trials.get('trials')} trials",
            actions=["save the strategy"],
        )
    cls: FailureClass = (failure or {}).get("classification", "DESIGN_FLAW")
    decision = ROUTES[cls]
    why = f"{cls}: {(failure or {}).get('root_cause', '')}"
    if decision == "REFINE" and refinements >= _MAX_REFINEMENTS:
        decision, why = "RESEARCH", f"{why}; {refinements} refinements failed, research again"
    trend = trajectory or {}
    reading = trend.get("next_action")
    if reading == "ABANDON" and decision != "FIX":
        decision, why = "ABANDON", f"{why}; the trajectory diverges"
    elif reading == "PIVOT" and decision == "TUNE":
        decision, why = "REFINE", f"{why}; tuning is {trend['status'].lower()}, pivot"
    return GateDecision(
        decision=decision,
        best_variant=best,
        reasoning=why,
        actions=(failure or {}).get("actions", []),
    )


def only_what_passed(ctx: RunContext[AlgoDeps], out: GateDecision) -> GateDecision:
    """SUCCESS must name a variant that met the goal in-sample *and* out-of-sample, and
    that the trial figures accept."""
    verdicts = ctx.deps.verdicts
    if out.best_variant is not None and out.best_variant not in verdicts:
        raise ModelRetry(f"best_variant {out.best_variant!r} is not one of {sorted(verdicts)}")
    if out.decision != "SUCCESS":
        return out
    verdict = verdicts.get(out.best_variant or "")
    if verdict is None:
        raise ModelRetry("SUCCESS needs best_variant: the id of the variant that passed")
    if not verdict["passed_in_sample"]:
        raise ModelRetry(
            f"{out.best_variant} does not meet the goal in-sample (score "
            f"{verdict['score_in_sample']:.2f}); it cannot be SUCCESS"
        )
    if not verdict["passed_out_of_sample"]:
        raise ModelRetry(
            f"{out.best_variant} meets the goal in-sample but not out-of-sample (score "
            f"{verdict['score_out_of_sample']:.2f}): that is overfitting, never SUCCESS; "
            "route it (REFINE or TUNE)"
        )
    if verdict.get("trials_refusal"):
        raise ModelRetry(
            f"{out.best_variant} meets the goal in and out of sample, but "
            f"{verdict['trials_refusal']}: that is overfitting, never SUCCESS; route it "
            "(REFINE, RESEARCH or ABANDON)"
        )
    return out


QUALITY_GATE: AgentSpec[AlgoDeps, GateDecision] = AgentSpec(
    agent=Agent(
        name="quality_gate",
        max_tokens=800,
        instructions=load_prompt(_PKG, "gate_system").template,
        output_type=GateDecision,
        output_validators=(only_what_passed,),
    ),
    policy=RulesPolicy(plan=[], decide=_gate, name="quality_gate"),
    tier="deep",
    turns={"quick": 1, "standard": 2, "deep": 3},
)

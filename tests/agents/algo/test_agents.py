"""The lab's agents: one table and one factory for the swarm, and the rules policies of
the strategist, the leader and the gate on hand-made tasks."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from alphadesk.agent import ModelRetry, RunContext
from alphadesk.agents.algo import AlgoDeps, default_agents
from alphadesk.agents.algo.developer import STRATEGIST, new_distinct_variants
from alphadesk.agents.algo.gate import QUALITY_GATE, only_what_passed
from alphadesk.agents.algo.models import GateDecision, ResearchBrief, StrategyBatch
from alphadesk.agents.algo.research import LEADER, SUBAGENTS
from alphadesk.agents.algo.tasks import AlgoTask, FailureTask, GateTask, LeaderTask, StrategistTask
from alphadesk.agents.algo.templates import TEMPLATES
from alphadesk.backtest.checks import check_strategy_code
from alphadesk.llm.rules import Transcript

AS_OF = datetime(2012, 12, 31, 21, tzinfo=UTC)


def _decide(policy: Any, kind: type[AlgoTask], **context: Any) -> Any:
    task = kind(symbol="AAPL", as_of=AS_OF, **context)
    return policy.decide(Transcript(task.render(), {}, 0, task=task))


def test_the_swarm_is_fifteen_rows_five_per_domain_from_one_factory() -> None:
    agents = default_agents()
    assert len(SUBAGENTS) == 15 and len({row.name for row in SUBAGENTS}) == 15
    for domain in ("technical", "fundamental", "sentiment"):
        assert sum(row.domain == domain for row in SUBAGENTS) == 5
    assert [spec.name for spec in agents.subagents] == [row.name for row in SUBAGENTS]
    assert sorted(agents.synthesizers) == ["fundamental", "sentiment", "technical"]
    assert len(agents.all) == 23


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_every_template_passes_the_sandbox_check(name: str) -> None:
    check = check_strategy_code(TEMPLATES[name].render())
    assert check.ok, check.summary()


def _strategist(last: dict[str, Any] | None, tried: dict[str, Any], n: int = 3) -> StrategyBatch:
    brief = {"approaches": ["trend", "momentum", "breakout", "mean_reversion"]}
    return _decide(
        STRATEGIST.policy,
        StrategistTask,
        iteration=2,
        goal="Sharpe above 1",
        n=n,
        brief=brief,
        last=last,
        tried=tried,
        library=[],
    )


_BEST = {
    "variant_id": "i1v1",
    "name": "sma_cross(fast=20, slow=50)",
    "template": "sma_cross",
    "approach": "trend",
    "parameters": {"fast": 20, "slow": 50},
    "score": 0.9,
    "error": None,
}


def test_tune_varies_the_best_variants_parameters_one_grid_step() -> None:
    batch = _strategist(
        {"decision": "TUNE", "variants": [_BEST]}, {"sma_cross": [_BEST["parameters"]]}
    )
    assert [v.template for v in batch.variants] == ["sma_cross"] * 3
    assert {v.variant_id for v in batch.variants} == {"i2v1", "i2v2", "i2v3"}
    for v in batch.variants:
        moved = {k for k in ("fast", "slow") if v.parameters[k] != _BEST["parameters"][k]}
        assert len(moved) == 1 and v.parameters["fast"] < v.parameters["slow"]
    assert batch.reasoning.startswith("TUNE")


def test_refine_turns_to_other_templates_and_never_repeats_a_parameter_set() -> None:
    batch = _strategist(
        {"decision": "REFINE", "variants": [_BEST]}, {"sma_cross": [_BEST["parameters"]]}
    )
    assert "sma_cross" not in {v.template for v in batch.variants}
    assert len({v.template for v in batch.variants}) == 3


def test_fix_rerenders_the_failed_variant_from_its_template() -> None:
    broken = _BEST | {"error": "in_sample: rejected: line 9: invalid syntax", "score": 0.0}
    batch = _strategist(
        {"decision": "FIX", "variants": [broken]}, {"sma_cross": [_BEST["parameters"]]}, n=1
    )
    (repaired,) = batch.variants
    assert repaired.template == "sma_cross" and repaired.parameters == _BEST["parameters"]
    assert check_strategy_code(repaired.code).ok


def test_the_leader_prefers_approaches_not_tried_on_a_second_research() -> None:
    sheets = [
        {
            "domain": "technical",
            "signal": "bullish",
            "confidence": 0.6,
            "recommended_approach": "trend",
        },
        {"domain": "fundamental", "signal": "unknown", "confidence": 0.0, "missing": ["none"]},
    ]
    feedback = {"reason": "every approach failed", "approaches_tried": ["trend", "momentum"]}
    brief: ResearchBrief = _decide(
        LEADER.policy, LeaderTask, goal="g", sheets=sheets, feedback=feedback
    )
    assert brief.approaches[:2] == ["mean_reversion", "breakout"]
    assert brief.research_quality == "low" and brief.gaps


def _gate(failure: str, trajectory: str | None = None, refinements: int = 0) -> GateDecision:
    variant = {"variant_id": "i1v1", "name": "x", "score": 0.5, "passed": False}
    reading = {"status": "DIVERGING", "next_action": trajectory} if trajectory else None
    return _decide(
        QUALITY_GATE.policy,
        GateTask,
        iteration=3,
        iterations=5,
        goal="g",
        variants=[variant],
        failure={"classification": failure, "root_cause": "r", "actions": []},
        trajectory=reading,
        refinements=refinements,
    )


@pytest.mark.parametrize(
    ("failure", "trajectory", "refinements", "decision"),
    [
        ("PARAMETER_ISSUE", None, 0, "TUNE"),
        ("ALGORITHM_BUG", "ABANDON", 0, "FIX"),  # a bug is fixed before anything is judged
        ("DESIGN_FLAW", None, 2, "REFINE"),
        ("DESIGN_FLAW", None, 3, "RESEARCH"),  # three refinements failed
        ("RESEARCH_GAP", None, 0, "RESEARCH"),
        ("FUNDAMENTAL_IMPOSSIBILITY", None, 0, "ABANDON"),
        ("PARAMETER_ISSUE", "ABANDON", 0, "ABANDON"),  # a diverging trajectory
        ("PARAMETER_ISSUE", "PIVOT", 0, "REFINE"),  # tuning that stagnates
    ],
)
def test_the_three_tier_routing(
    failure: str, trajectory: str | None, refinements: int, decision: str
) -> None:
    assert _gate(failure, trajectory, refinements).decision == decision


def _ctx(**deps: Any) -> RunContext[AlgoDeps]:
    return RunContext(deps=AlgoDeps(market=None, **deps), as_of=AS_OF, run_id="t", agent="t")  # type: ignore[arg-type]


def test_success_for_an_overfit_variant_goes_back_as_a_retry() -> None:
    verdicts = {
        "i1v1": {
            "passed_in_sample": True,
            "passed_out_of_sample": False,
            "score_in_sample": 1.0,
            "score_out_of_sample": 0.3,
        }
    }
    claim = GateDecision(decision="SUCCESS", best_variant="i1v1", reasoning="great in-sample")
    with pytest.raises(ModelRetry, match="overfitting"):
        only_what_passed(_ctx(verdicts=verdicts), claim)
    route = GateDecision(decision="REFINE", best_variant="i1v1", reasoning="overfit")
    assert only_what_passed(_ctx(verdicts=verdicts), route) is route


def test_variant_ids_must_be_new_and_distinct() -> None:
    batch = _strategist(None, {}, n=2)
    with pytest.raises(ModelRetry, match="i2v1"):
        new_distinct_variants(_ctx(used_ids=frozenset({"i2v1"})), batch)
    assert new_distinct_variants(_ctx(), batch) is batch


def test_past_successes_lead_the_brief() -> None:
    sheets = [
        {
            "domain": "technical",
            "signal": "bullish",
            "confidence": 0.6,
            "recommended_approach": "trend",
        }
    ]
    lessons = [
        {"lesson": "l1", "decision": "TUNE", "approach": "momentum", "score": 0.9},
        {"lesson": "l2", "decision": "SUCCESS", "approach": "breakout", "score": 1.0},
    ]
    feedback = {"reason": None, "approaches_tried": [], "lessons": lessons}
    brief: ResearchBrief = _decide(
        LEADER.policy, LeaderTask, goal="g", sheets=sheets, feedback=feedback
    )
    assert brief.approaches[:2] == ["breakout", "trend"]


def test_a_domain_missing_a_long_line_of_data_is_a_gap_within_its_bound() -> None:
    # The data layer's message may fill a missing line's 300 characters: the gap that
    # quotes it is cut to fit, not a brief the rules leader cannot write.
    lack = "fundamentals: " + "the local folder has daily bars of SYN but no fundamentals " * 5
    sheets = [
        {"domain": "technical", "signal": "bullish", "confidence": 0.6},
        {"domain": "fundamental", "signal": "unknown", "confidence": 0.0, "missing": [lack[:300]]},
    ]
    feedback = {"reason": None, "approaches_tried": [], "lessons": []}
    brief: ResearchBrief = _decide(
        LEADER.policy, LeaderTask, goal="g", sheets=sheets, feedback=feedback
    )
    (gap,) = brief.gaps
    assert gap.startswith("fundamental: no data (fundamentals: the local folder")
    assert len(gap) <= 300 and gap.endswith("…")


def test_the_live_view_shows_each_gate_decision() -> None:
    from alphadesk.cli.live import LiveView
    from alphadesk.pipelines.events import GateDecided

    view = LiveView(enabled=False)
    view.on_event(
        GateDecided(
            run_id="r",
            agent="quality_gate",
            symbol="AAPL",
            iteration=2,
            decision="TUNE",
            best_variant="i2v1",
            best_score=0.87,
            reasoning="PARAMETER_ISSUE: near the goal",
        )
    )
    (line,) = view._lines
    assert (
        line.plain
        == "AAPL iteration 2 TUNE (best i2v1, score 0.87): PARAMETER_ISSUE: near the goal"
    )


_PASSED = {
    "variant_id": "i2v1",
    "name": "sma_cross(fast=5, slow=30)",
    "approach": "trend",
    "score": 1.0,
    "passed": True,
    "in_sample": {"score": 1.0, "passed": True, "unmet": []},
    "out_of_sample": {"score": 1.0, "passed": True, "unmet": []},
}


def _figures(dsr: float, pbo: float, refusal: str | None) -> dict[str, Any]:
    return {
        "trials": 12,
        "candidate": "i2v1",
        "deflated_sharpe": dsr,
        "pbo": pbo,
        "min_deflated_sharpe": 0.95,
        "max_pbo": 0.5,
        "refusal": refusal,
    }


def test_the_failure_analyst_names_overfitting_when_the_trial_figures_refuse() -> None:
    refusal = "its deflated Sharpe ratio 31.0% after 12 trials is not above 95%"
    from alphadesk.agents.algo.gate import FAILURE_ANALYST

    analysis = _decide(
        FAILURE_ANALYST.policy,
        FailureTask,
        iteration=3,
        iterations=6,
        goal="Sharpe above 0.5",
        variants=[_PASSED],
        history=[],
        trials=_figures(0.31, 0.42, refusal),
    )
    assert analysis.classification == "DESIGN_FLAW"
    assert analysis.root_cause.startswith("overfitting:") and refusal in analysis.root_cause
    assert any("deflated Sharpe ratio 31.0% (needs above 95.0%)" in e for e in analysis.evidence)


@pytest.mark.parametrize(
    ("dsr", "pbo", "refusal", "decision"),
    [
        (0.99, 0.2, None, "SUCCESS"),
        (0.31, 0.2, "its deflated Sharpe ratio 31.0% after 12 trials is not above 95%", "REFINE"),
        (0.99, 0.7, "the probability of backtest overfitting 70.0% is not below 50%", "REFINE"),
    ],
)
def test_the_rules_gate_needs_the_trial_figures_too(
    dsr: float, pbo: float, refusal: str | None, decision: str
) -> None:
    failure = (
        {"classification": "DESIGN_FLAW", "root_cause": f"overfitting: {refusal}", "actions": []}
        if refusal
        else None
    )
    gate: GateDecision = _decide(
        QUALITY_GATE.policy,
        GateTask,
        iteration=2,
        iterations=5,
        goal="g",
        variants=[_PASSED],
        failure=failure,
        trajectory=None,
        trials=_figures(dsr, pbo, refusal),
        refinements=0,
    )
    assert gate.decision == decision
    if decision == "SUCCESS":
        assert "deflated Sharpe ratio 99.0%, PBO 20.0% over 12 trials" in gate.reasoning
    else:
        assert "overfitting" in gate.reasoning


def test_success_the_trial_figures_refuse_goes_back_as_a_retry() -> None:
    refusal = "the probability of backtest overfitting 70.0% is not below 50%"
    verdicts = {
        "i2v1": {
            "passed_in_sample": True,
            "passed_out_of_sample": True,
            "score_in_sample": 1.0,
            "score_out_of_sample": 1.0,
            "trials_refusal": refusal,
        }
    }
    claim = GateDecision(decision="SUCCESS", best_variant="i2v1", reasoning="met both")
    with pytest.raises(ModelRetry, match=r"PBO|overfitting 70\.0%.*never SUCCESS"):
        only_what_passed(_ctx(verdicts=verdicts), claim)
    verdicts["i2v1"]["trials_refusal"] = None
    assert only_what_passed(_ctx(verdicts=verdicts), claim) is claim

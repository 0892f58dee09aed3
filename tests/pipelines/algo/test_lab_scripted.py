"""Scripted-model runs of the lab: a broken variant routed to FIX and repaired, an overfit
variant never passed as SUCCESS, budgets that end the lab with the best variant so far."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from alphadesk.agents.algo.developer import STRATEGIST
from alphadesk.agents.algo.models import GateDecision, StrategyBatch
from alphadesk.agents.algo.research import LEADER
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.llm.messages import AssistantMessage, Message, RequestSettings, ToolSpec, Usage
from alphadesk.llm.rules import RulesModel
from alphadesk.llm.testing import FunctionModel, ScriptedModel, json_answer
from alphadesk.pipelines.algo.models import AlgoRequest, AlgoResult
from alphadesk.pipelines.algo.pipeline import StrategyLab
from alphadesk.pipelines.runner import PipelineRunner
from tests.pipelines.algo.conftest import request, scripted_backtests

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _strategist(corrupt_first: bool = False) -> FunctionModel:
    """The rules strategist, breaking the first variant's code on the first call."""
    rules = RulesModel(STRATEGIST.policy)
    calls: list[int] = []

    async def respond(
        messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> AssistantMessage:
        answer = await rules.request(messages, tools, settings)
        batch = StrategyBatch.model_validate_json(answer.message.content)
        if corrupt_first and not calls:
            broken = batch.variants[0].code.replace("def next(self):", "def next(self)")
            batch.variants[0] = batch.variants[0].model_copy(update={"code": broken})
        calls.append(1)
        return json_answer(batch)

    return FunctionModel(respond, name="scripted-strategist", usage=Usage(requests=1, cost_usd=0.6))


async def _run(settings: Settings, market: MarketData, req: AlgoRequest, **kw: Any) -> AlgoResult:
    lab = StrategyLab(settings, market, memory=None, **kw)
    result = await PipelineRunner(settings, lab).analyze(req)
    assert result is not None
    return result


@pytest.mark.slow
async def test_a_syntax_error_is_routed_to_fix_and_repaired(
    settings: Settings, market: MarketData, sandbox: None
) -> None:
    strategist = _strategist(corrupt_first=True)
    req = request(variants=1, iterations=2)
    result = await _run(settings, market, req, models={"strategist": strategist})
    broken, repaired = result.variants
    assert broken.in_sample.status == "rejected" and "line" in (broken.error or "")
    first = result.iterations[0]
    assert first.failure is not None and first.failure.classification == "ALGORITHM_BUG"
    assert first.gate.decision == "FIX"
    # The repair: the same template and parameters, code that now runs in the sandbox.
    assert (repaired.template, repaired.parameters) == (broken.template, broken.parameters)
    assert repaired.in_sample.status == "completed" and repaired.out_of_sample is not None
    assert repaired.code_hash != broken.code_hash
    second_task = strategist.requests[1].messages[-1]
    assert '"decision": "FIX"' in str(second_task.content)
    assert result.best is not None and result.best.variant_id == repaired.variant_id


def _overfit(code: str, period: str) -> dict[str, float]:
    if period == "in_sample":
        return {"sharpe": 2.0, "max_drawdown": -0.05}
    return {"sharpe": -0.4, "max_drawdown": -0.32}


async def test_an_overfit_variant_is_never_success(settings: Settings, market: MarketData) -> None:
    req = request(variants=1, iterations=1)
    split = StrategyLab(settings, market, memory=None).split(req)
    says_success = GateDecision(decision="SUCCESS", best_variant="i1v1", reasoning="in-sample 2.0")
    corrected = GateDecision(decision="REFINE", best_variant="i1v1", reasoning="overfit")
    gate = ScriptedModel([json_answer(says_success), json_answer(corrected)])
    result = await _run(
        settings,
        market,
        req,
        models={"quality_gate": gate},
        backtester=scripted_backtests(_overfit, split.out_of_sample[0]),
    )
    (variant,) = result.variants
    assert variant.in_sample.passed and not variant.out_of_sample.passed  # type: ignore[union-attr]
    assert "overfitting, never SUCCESS" in gate.requests[1].last_text
    gate.assert_consumed()
    assert result.iterations[0].gate.decision == "REFINE"
    assert result.decision == "BUDGET_EXHAUSTED" and not result.best.passed  # type: ignore[union-attr]


async def test_the_rules_gate_sees_overfitting_too(settings: Settings, market: MarketData) -> None:
    req = request(variants=2, iterations=1)
    split = StrategyLab(settings, market, memory=None).split(req)
    result = await _run(
        settings, market, req, backtester=scripted_backtests(_overfit, split.out_of_sample[0])
    )
    entry = result.iterations[0]
    assert entry.gate.decision != "SUCCESS"
    assert entry.failure is not None and "overfit" in entry.failure.root_cause


def _never_enough(code: str, period: str) -> dict[str, float]:
    """Deterministic figures below the goal, different per variant."""
    bump = int(hashlib.sha256(code.encode()).hexdigest()[:4], 16) / 65535
    return {"sharpe": 0.4 + 0.5 * bump, "max_drawdown": -0.18}


async def test_the_iteration_budget_ends_with_the_best_so_far(
    settings: Settings, market: MarketData
) -> None:
    req = request(variants=2, iterations=2)
    split = StrategyLab(settings, market, memory=None).split(req)
    result = await _run(
        settings, market, req, backtester=scripted_backtests(_never_enough, split.out_of_sample[0])
    )
    assert result.decision == "BUDGET_EXHAUSTED"
    assert result.budget == "the iteration limit (2) was reached"
    assert len(result.iterations) == 2 and len(result.variants) == 4
    best = max(result.variants, key=lambda v: v.score)
    assert result.best is not None and result.best.variant_id == best.variant_id
    assert best.variant_id in (result.reason or "") and "best variant so far" in (
        result.reason or ""
    )
    assert result.strategy_file is not None


async def test_the_cost_budget_ends_with_the_best_so_far(
    settings: Settings, market: MarketData
) -> None:
    req = request(variants=1, iterations=5, max_cost_usd=1.0)
    split = StrategyLab(settings, market, memory=None).split(req)
    result = await _run(
        settings,
        market,
        req,
        models={"strategist": _strategist()},  # each call costs $0.60
        backtester=scripted_backtests(_never_enough, split.out_of_sample[0]),
    )
    assert result.decision == "BUDGET_EXHAUSTED" and len(result.iterations) == 2
    assert result.budget is not None and result.budget.startswith("the cost limit ($1)")
    assert result.best is not None


async def test_a_variant_that_passes_both_periods_succeeds(
    settings: Settings, market: MarketData
) -> None:
    req = request(variants=2, iterations=3)
    split = StrategyLab(settings, market, memory=None).split(req)

    def good(code: str, period: str) -> dict[str, float]:
        return {"sharpe": 1.5, "max_drawdown": -0.1}

    def skilled(code: str, period: str, bars: int) -> list[float]:
        """A steady edge per variant, the same in both periods: no luck to deflate."""
        bump = int(hashlib.sha256(code.encode()).hexdigest()[:4], 16) / 65535
        rng = np.random.default_rng(len(period))  # one market: the variants' noise is shared
        return list(0.002 + 0.004 * bump + rng.normal(0, 0.005, bars))

    backtests = scripted_backtests(good, split.out_of_sample[0], skilled)
    result = await _run(settings, market, req, backtester=backtests)
    assert result.decision == "SUCCESS" and len(result.iterations) == 1, result.reason
    assert result.best is not None and result.best.passed
    assert result.holdout is not None and result.holdout.passed  # the same edge there


async def test_raw_figures_that_pass_by_luck_are_refused(
    settings: Settings, market: MarketData
) -> None:
    """Every variant meets the goal in both periods, but its returns are noise: the trial
    figures refuse SUCCESS and the failure analysis names overfitting."""
    req = request(variants=3, iterations=1)
    split = StrategyLab(settings, market, memory=None).split(req)

    def good(code: str, period: str) -> dict[str, float]:
        return {"sharpe": 1.5, "max_drawdown": -0.1}

    def luck(code: str, period: str, bars: int) -> list[float]:
        seed = int(hashlib.sha256(f"{code}{period}".encode()).hexdigest()[:8], 16)
        return list(np.random.default_rng(seed).normal(0, 0.01, bars))

    backtests = scripted_backtests(good, split.out_of_sample[0], luck)
    result = await _run(settings, market, req, backtester=backtests)
    (entry,) = result.iterations
    assert all(v.passed for v in result.variants)
    assert entry.gate.decision != "SUCCESS" and result.decision == "BUDGET_EXHAUSTED"
    assert entry.failure is not None and entry.failure.root_cause.startswith("overfitting:")
    assert entry.trials is not None and entry.trials.trials == 3


async def test_an_interrupted_lab_resumes_from_its_checkpoint(
    settings: Settings, market: MarketData
) -> None:
    req = request(variants=2, iterations=2)
    split = StrategyLab(settings, market, memory=None).split(req)
    lab = StrategyLab(
        settings,
        market,
        memory=None,
        backtester=scripted_backtests(_never_enough, split.out_of_sample[0]),
    )
    runner = PipelineRunner(settings, lab)
    stopped = await runner.analyze(req, interrupt_after=["gate"])
    assert stopped is None
    (run,) = runner.store.recent(kind="algo")
    result = await runner.analyze(req, resume_run_id=run.id)
    assert result is not None and result.decision == "BUDGET_EXHAUSTED"
    assert [e.iteration for e in result.iterations] == [1, 2]  # the first was not redone
    assert len(result.variants) == 4


async def test_research_sends_the_lab_back_to_the_swarm(
    settings: Settings, market: MarketData
) -> None:
    req = request(variants=2, iterations=2)
    split = StrategyLab(settings, market, memory=None).split(req)
    research = GateDecision(decision="RESEARCH", best_variant="i1v1", reasoning="a research gap")
    tune = GateDecision(decision="TUNE", best_variant="i2v1", reasoning="near")
    gate = ScriptedModel([json_answer(research), json_answer(tune)])
    leader_rules = RulesModel(LEADER.policy)

    async def lead(
        messages: Sequence[Message], tools: Sequence[ToolSpec], s: RequestSettings
    ) -> AssistantMessage:
        return (await leader_rules.request(messages, tools, s)).message

    leader = FunctionModel(lead, name="leader")
    result = await _run(
        settings,
        market,
        req,
        models={"quality_gate": gate, "research_leader": leader},
        backtester=scripted_backtests(_never_enough, split.out_of_sample[0]),
    )
    assert [e.research_round for e in result.iterations] == [1, 2]
    assert len(leader.requests) == 2
    second = str(leader.requests[1].messages[-1].content)
    assert "a research gap" in second  # the gate's reason reaches the leader
    first_batch = {v.approach for v in result.variants if v.iteration == 1}
    assert result.brief is not None
    assert result.brief.approaches[0] not in first_batch  # an approach not tried yet leads

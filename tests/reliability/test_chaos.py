"""The CSP desk under a model that fails 30 % of its calls the ways providers do.

Every run ends in a typed outcome (a result, or a failed result with its reason), at least
95 % reach the decision an undisturbed run reaches, and none goes past its usage limits.
The test runs 40 seeded runs (about 15 s); ``bench/chaos.py`` runs 200.
"""

from __future__ import annotations

from collections import Counter

import pytest

from alphadesk.agents.csp import default_agents
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.llm.base import ModelUnavailable, ProviderTimeout, RateLimited
from alphadesk.llm.chaos import FAILURES, TRANSIENT, ChaosModel
from alphadesk.llm.messages import RequestSettings, UserMessage
from alphadesk.llm.retrying import RetryingModel
from alphadesk.llm.rules import RulesModel
from alphadesk.llm.testing import ScriptedModel
from alphadesk.pipelines.csp.pipeline import CspPipeline
from alphadesk.pipelines.runner import PipelineRunner
from tests.support.chaos_desk import REQUEST, chaos_runs

RUNS = 40
FAILURE_RATE = 0.3


@pytest.mark.slow
async def test_the_csp_desk_survives_a_model_failing_30_percent_of_calls(
    settings: Settings, market: MarketData
) -> None:
    reference = await PipelineRunner(settings, CspPipeline(settings, market), charts=False).analyze(
        REQUEST
    )
    assert reference is not None and reference.decision == "select"
    runs = await chaos_runs(
        settings, market, runs=RUNS, failure_rate=FAILURE_RATE, seed=15, reference=reference
    )
    typed = [r for r in runs if r.decision is not None]
    assert len(typed) == RUNS, [r.error for r in runs if r.decision is None]
    for run in typed:
        assert run.decision in ("select", "failed"), run  # never a wrong "reject"
        if run.decision == "failed":
            assert run.error  # a failure says why
    complete = [r for r in typed if r.same_as_reference]
    assert len(complete) >= 0.95 * RUNS, Counter(r.error for r in typed if r.error)
    assert all(r.within_limits for r in runs)
    injected = sum(r.injected for r in runs)
    assert injected > 0.2 * sum(r.paid_calls + r.retries for r in runs)  # chaos did happen
    assert sum(r.retries for r in runs) > 0


async def test_chaos_is_seeded_and_injects_every_kind_of_failure() -> None:
    def drawn(seed: int) -> list[str | None]:
        model = ChaosModel(ScriptedModel([]), 0.5, seed=seed)
        return [model._draw() for _ in range(400)]

    assert drawn(3) == drawn(3) and drawn(3) != drawn(4)
    assert set(drawn(3)) == {None, *FAILURES}
    assert 0.4 < sum(d is not None for d in drawn(3)) / 400 < 0.6


async def test_transient_failures_are_typed_and_retried_with_backoff() -> None:
    policy = default_agents().by_name("research").policy
    chaos = ChaosModel(RulesModel(policy), 1.0, seed=1, failures=TRANSIENT)
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    retrying = RetryingModel(chaos, max_retries=3, base_delay_s=0.5, seed=2, sleep=record)
    with pytest.raises(ModelUnavailable) as raised:
        await retrying.request([UserMessage(content="NVDA")], [], RequestSettings())
    assert type(raised.value).__name__ in {
        "RateLimited",
        "ProviderTimeout",
        "ProviderServerError",
        "ProviderConnectionError",
    }
    assert len(chaos.injected) == 4 and retrying.retries == 3
    # Exponential backoff with jitter in [0.5, 1.5): 0.5 s, 1 s, 2 s before jitter.
    for wait, base in zip(waits, (0.5, 1.0, 2.0), strict=True):
        assert 0.5 * base <= wait < 1.5 * base
    assert issubclass(RateLimited, ModelUnavailable) and issubclass(
        ProviderTimeout, ModelUnavailable
    )

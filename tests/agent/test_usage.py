"""The run's ledger: its totals, asked before every request, are summed on from the last
count and stay exactly the sum of every entry as calls are recorded."""

from __future__ import annotations

import math

from alphadesk.agent import UsageLedger
from alphadesk.llm.attempts import FailedAttempt
from alphadesk.llm.messages import AssistantMessage, ModelResponse, Usage


def _response(tokens: int, cost: float, *, cached: bool = False) -> ModelResponse:
    return ModelResponse(
        message=AssistantMessage(content="ok"),
        model="m/x",
        usage=Usage(requests=1, input_tokens=tokens, output_tokens=tokens // 2, cost_usd=cost),
        cached=cached,
    )


def test_totals_stay_the_sum_of_every_entry_as_calls_are_recorded() -> None:
    ledger = UsageLedger()
    costs = [0.1, 0.2, 0.3, 1e-9, 0.7]
    for i, cost in enumerate(costs):
        ledger.record("bull" if i % 2 else "bear", _response(100 + i, cost, cached=i == 2))
        totals = ledger.totals  # asked after every call, as the loop does
        recorded = ledger.entries
        assert totals.requests == sum(not e.cached for e in recorded)
        assert totals.input_tokens == sum(e.input_tokens for e in recorded)
        assert totals.output_tokens == sum(e.output_tokens for e in recorded)
        expected_cost = 0.0
        for e in recorded:  # in order: the very floats, not merely close ones
            expected_cost += e.cost_usd
        assert totals.cost_usd == expected_cost
    assert math.isclose(ledger.totals.cost_usd, sum(costs))
    assert ledger.usage_of("bull").input_tokens == 101 + 103
    assert ledger.usage_of(None) == ledger.totals
    attempt = FailedAttempt(
        model="m/x", error="Timeout", message="slow", input_tokens=7, output_tokens=0, latency_s=1
    )
    ledger.record_failed("bear", attempt)
    assert ledger.totals.requests == 5 and ledger.totals.input_tokens == 510 + 7


def test_totals_start_again_when_entries_are_taken_away() -> None:
    ledger = UsageLedger()
    for _ in range(3):
        ledger.record("bull", _response(10, 0.5))
    assert ledger.totals.input_tokens == 30
    del ledger.entries[1:]
    assert ledger.totals == Usage(requests=1, input_tokens=10, output_tokens=5, cost_usd=0.5)

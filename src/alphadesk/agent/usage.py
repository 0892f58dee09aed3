"""Budgets and the per-run ledger of every model call."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field

from alphadesk.config import UsageLimits
from alphadesk.llm.attempts import FailedAttempt
from alphadesk.llm.messages import ModelResponse, Usage

__all__ = [
    "LedgerEntry",
    "LimitExceeded",
    "UsageLedger",
    "UsageLimits",
    "limit_exceeded",
    "remaining_time",
]


def limit_exceeded(
    limits: UsageLimits, ledger: UsageLedger, *, before_request: bool = False
) -> LimitExceeded | None:
    """The first of ``limits`` that ``ledger`` has hit, or ``None``.

    ``before_request`` also refuses a request that would go past the request limit.
    """
    totals = ledger.totals
    if limits.requests is not None and (
        totals.requests > limits.requests or (before_request and totals.requests >= limits.requests)
    ):
        return LimitExceeded("requests", limits.requests, totals.requests)
    if limits.total_tokens is not None and totals.total_tokens > limits.total_tokens:
        return LimitExceeded("total_tokens", limits.total_tokens, totals.total_tokens)
    if limits.cost_usd is not None and totals.cost_usd > limits.cost_usd:
        return LimitExceeded("cost_usd", limits.cost_usd, round(totals.cost_usd, 6))
    if limits.wall_time_s is not None and ledger.elapsed_s > limits.wall_time_s:
        return LimitExceeded("wall_time_s", limits.wall_time_s, round(ledger.elapsed_s, 3))
    return None


def remaining_time(limits: UsageLimits, ledger: UsageLedger) -> float | None:
    """Seconds left of the run's wall-time budget (None: no budget)."""
    if limits.wall_time_s is None:
        return None
    return max(limits.wall_time_s - ledger.elapsed_s, 0.0)


@dataclass(frozen=True)
class LimitExceeded:
    """Which budget ran out, its limit and the value reached."""

    limit: str
    allowed: float
    reached: float

    def __str__(self) -> str:
        return f"usage limit {self.limit}={self.allowed} exceeded (reached {self.reached})"


class LedgerEntry(BaseModel):
    """One model call."""

    model_config = ConfigDict(frozen=True)

    agent: str
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float
    cached: bool
    at: datetime
    error: str | None = Field(
        None, description="why the call brought no answer (failed or timed out); None if answered"
    )


@dataclass
class UsageLedger:
    """Every model call of one run. Shared by all agents of a pipeline run, so budgets apply
    to the whole run."""

    entries: list[LedgerEntry] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    # The totals of the first entries (asked before every request): summed on from there
    # in order, the same floats as summing them all again.
    _summed: tuple[int, Usage] = field(default=(0, Usage()), init=False, repr=False, compare=False)

    def record(self, agent: str, response: ModelResponse) -> LedgerEntry:
        entry = LedgerEntry(
            agent=agent,
            model=response.model,
            input_tokens=response.usage.input_tokens,
            output_tokens=response.usage.output_tokens,
            cost_usd=response.usage.cost_usd,
            latency_s=response.latency_s,
            cached=response.cached,
            at=datetime.now(UTC),
        )
        self.entries.append(entry)
        return entry

    def record_failed(self, agent: str, attempt: FailedAttempt) -> LedgerEntry:
        """A call that brought no answer: it was made (and may have cost tokens), so it
        counts against the request budget and shows in the ledger with its error."""
        entry = LedgerEntry(
            agent=agent,
            model=attempt.model,
            input_tokens=attempt.input_tokens,
            output_tokens=attempt.output_tokens,
            cost_usd=0.0,
            latency_s=attempt.latency_s,
            cached=False,
            at=datetime.now(UTC),
            error=f"{attempt.error}: {attempt.message}"[:300],
        )
        self.entries.append(entry)
        return entry

    @property
    def totals(self) -> Usage:
        counted, usage = self._summed
        if counted > len(self.entries):  # entries were taken away: start again
            counted, usage = 0, Usage()
        if counted < len(self.entries):
            usage = _summed_on(usage, self.entries[counted:])
            self._summed = (len(self.entries), usage)
        return usage

    def usage_of(self, agent: str | None) -> Usage:
        """Totals for one agent, or for everyone when ``agent`` is None. Cached calls are
        free and are not counted as requests."""
        if agent is None:
            return self.totals
        return _summed_on(Usage(), [e for e in self.entries if e.agent == agent])

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started


def _summed_on(usage: Usage, entries: list[LedgerEntry]) -> Usage:
    """``usage`` with ``entries`` added one by one (cached calls are not requests)."""
    requests, inputs, outputs, cost = (
        usage.requests,
        usage.input_tokens,
        usage.output_tokens,
        usage.cost_usd,
    )
    for entry in entries:
        requests += not entry.cached
        inputs += entry.input_tokens
        outputs += entry.output_tokens
        cost += entry.cost_usd
    return Usage(requests=requests, input_tokens=inputs, output_tokens=outputs, cost_usd=cost)

"""The CSP desk run many times over models that fail at random (``ChaosModel``), in process,
with one shared data provider: what each run ended in and what the failures cost."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

from alphadesk.agents.csp import default_agents
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.data.calendar import session_close
from alphadesk.llm.chaos import ChaosModel
from alphadesk.llm.retrying import RetryingModel
from alphadesk.llm.rules import RulesModel
from alphadesk.pipelines.csp.models import CspRequest, CspResult
from alphadesk.pipelines.csp.pipeline import CspPipeline
from alphadesk.pipelines.runner import PipelineRunner
from alphadesk.store import RunStore

REQUEST = CspRequest(symbol="NVDA", as_of=session_close(date(2024, 11, 29)))


async def _no_wait(_seconds: float) -> None:
    """Backoff without the wait: the delays are computed and counted, never slept."""


@dataclass(frozen=True)
class ChaosRun:
    """How one run under chaos ended."""

    seed: int
    decision: str | None  # None: the run raised instead of ending in a typed outcome
    error: str | None
    same_as_reference: bool
    paid_calls: int
    injected: int
    retries: int
    within_limits: bool


async def chaos_runs(
    settings: Settings,
    market: MarketData,
    *,
    runs: int,
    failure_rate: float,
    seed: int,
    reference: CspResult,
    sleep: Callable[[float], Awaitable[None]] = _no_wait,
) -> list[ChaosRun]:
    """``runs`` seeded CSP runs, each agent's rules model behind ChaosModel and RetryingModel."""
    agents = default_agents()
    store = RunStore(settings.store_path)
    limit = settings.limits.requests
    outcomes = []
    for n in range(runs):
        run_seed = seed * 100_003 + n
        chaos = {
            name: ChaosModel(
                RulesModel(agents.by_name(name).policy), failure_rate, seed=run_seed * 7 + i
            )
            for i, name in enumerate(agents.names)
        }
        models: dict[str, Any] = {
            name: RetryingModel(model, seed=run_seed, sleep=sleep) for name, model in chaos.items()
        }
        runner = PipelineRunner(
            settings, CspPipeline(settings, market, models=models), charts=False
        )
        try:
            result = await runner.analyze(REQUEST)
        except Exception as exc:  # an untyped ending: counted, never hidden
            outcomes.append(
                ChaosRun(run_seed, None, f"{type(exc).__name__}: {exc}", False, 0, 0, 0, True)
            )
            continue
        assert result is not None and result.run_id is not None
        paid = sum(not e["cached"] for e in store.ledger(result.run_id))
        outcomes.append(
            ChaosRun(
                seed=run_seed,
                decision=result.decision,
                error=result.reason if result.decision == "failed" else None,
                same_as_reference=_decided(result) == _decided(reference),
                paid_calls=paid,
                injected=sum(m.failed for m in chaos.values()),
                retries=sum(m.retries for m in models.values()),
                within_limits=limit is None or paid <= limit,
            )
        )
    return outcomes


def _decided(result: CspResult) -> dict[str, Any]:
    return result.model_dump(mode="json", exclude={"run_id", "agents"})

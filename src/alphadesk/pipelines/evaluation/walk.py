"""The walk forward: at each rebalancing date each symbol is decided by the desk, inside a
decision scope, on guarded data, with every model call metered and cached."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from alphadesk.agents.spec import AgentSpec, model_for
from alphadesk.config import CacheMode, DeskSettings, Settings
from alphadesk.data.base import MarketData
from alphadesk.llm.base import CacheMiss, Model
from alphadesk.llm.cache import CachedModel, ResponseCache, cache_key
from alphadesk.llm.messages import Message, ModelResponse, RequestSettings, ToolSpec
from alphadesk.llm.wrapper import ModelWrapper
from alphadesk.pipelines.base import Pipeline
from alphadesk.pipelines.runner import PipelineRunner

from .models import DecisionRecord, EvalSpec, PutRecord
from .positions import positions_from_decisions
from .scope import LookAheadError, current_decision, decision

__all__ = [
    "BeforeDay",
    "DeskFactory",
    "DeskView",
    "Desks",
    "Metered",
    "ModelWrap",
    "Pair",
    "agent_models",
    "decide",
    "fill_positions",
]

logger = logging.getLogger(__name__)

# (settings, guarded market, models by agent) -> the desk to evaluate
DeskFactory = Callable[[Settings, MarketData, Mapping[str, Model]], Pipeline[Any, Any]]
# (agent, model) -> the model to use, e.g. a counting wrapper in a test
ModelWrap = Callable[[str, Model], Model]
# awaited before a day's decisions, once those of the days before it are made
BeforeDay = Callable[[datetime], Awaitable[None]]


class DeskView(Protocol):
    """How the desk is asked about a symbol at an instant when it sees a disguised market
    (:class:`~alphadesk.data.disguise.Disguise`); the records keep the real ones."""

    def symbol(self, real: str) -> str: ...

    def instant(self, real: datetime) -> datetime: ...


class Metered(ModelWrapper):
    """A cached model that books each response on the decision in progress: every response
    counts as a call at its first-answered cost (so a replayed evaluation reports the same
    figures), and those answered now count as live calls too."""

    inner: CachedModel

    def __init__(self, inner: CachedModel) -> None:
        super().__init__(inner)

    async def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        response = await self.inner.request(messages, tools, settings)
        scope = current_decision()
        if scope is None:
            return response
        cost, usage = response.usage.cost_usd, response.usage
        if not response.cached:
            scope.live_calls += 1
            scope.live_cost_usd += cost
        elif usage.input_tokens or usage.output_tokens:
            # A hit's cost is zeroed: look up what it first cost (no tokens, no cost).
            key = cache_key(self.name, messages, tools, settings)
            stored = await asyncio.to_thread(self.inner.cache.get, key)
            cost = stored.usage.cost_usd if stored is not None else 0.0
        scope.model_calls += 1
        scope.model_cost_usd += cost
        return response


def agent_models(
    specs: Iterable[AgentSpec[Any, Any]],
    settings: Settings,
    model: str,
    mode: CacheMode,
    wrap: ModelWrap | None = None,
) -> dict[str, Model]:
    """Each agent's model, the rules included, behind the evaluation's response cache."""
    plain = settings.model_copy(update={"cache": CacheMode.OFF})
    cache = ResponseCache(settings.store_path)
    models: dict[str, Model] = {}
    for spec in specs:
        base = model_for(spec, plain, model)
        if wrap is not None:
            base = wrap(spec.name, base)
        models[spec.name] = Metered(CachedModel(base, cache, mode))
    return models


Pair = tuple[str, datetime]  # a symbol to decide at an instant
Desks = Mapping[Pair, DeskSettings]  # the trading desk a pair is asked of, if not the settings'


async def decide(
    spec: EvalSpec,
    settings: Settings,
    desk: Pipeline[Any, Any],
    pairs: Sequence[Pair],
    *,
    concurrency: int | None = None,
    on_decision: Callable[[DecisionRecord], None] | None = None,
    view: DeskView | None = None,
    desks: Desks | None = None,
    before_day: BeforeDay | None = None,
) -> list[DecisionRecord]:
    """Each symbol decided at its instant, ``concurrency`` (default the spec's) at a time,
    in the order of ``pairs``; ``on_decision`` hears of each as it is made. With ``view``
    the desk is asked the viewed symbol and instant (the records keep the real ones).
    ``desks`` names the trading desk (analysts, rounds) a pair is asked of where it is not
    the settings'. With ``before_day`` the pairs are decided day by day, each day's after
    ``await before_day(day)`` and after every decision of the days before it.

    Raises:
        LookAheadError: The desk read past a decision instant.
        CacheMiss: A replayed evaluation asked the model something never recorded.
    """
    width = concurrency or spec.concurrency
    # A stopped decision is asked again whole (the journal holds no half decision): its
    # run needs no checkpoints to resume from.
    runner: PipelineRunner[Any, Any] = PipelineRunner(
        settings, desk, concurrency=width, charts=False, checkpoints=False
    )
    slots = asyncio.Semaphore(width)
    desks = desks or {}

    async def one(symbol: str, instant: datetime) -> DecisionRecord:
        setup = desks.get((symbol, instant))
        async with slots:
            record = await _decide(spec, settings, runner, symbol, instant, view, setup)
        if on_decision is not None:
            on_decision(record)
        return record

    if before_day is None:
        return await _together([one(s, d) for s, d in pairs])
    decided: list[DecisionRecord] = []
    for day in sorted({d for _, d in pairs}):
        await before_day(day)
        decided += await _together([one(s, d) for s, d in pairs if d == day])
    return decided


async def _together(work: Sequence[Awaitable[DecisionRecord]]) -> list[DecisionRecord]:
    tasks = [asyncio.ensure_future(w) for w in work]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def _decide(
    spec: EvalSpec,
    settings: Settings,
    runner: PipelineRunner[Any, Any],
    symbol: str,
    instant: datetime,
    view: DeskView | None = None,
    setup: DeskSettings | None = None,
) -> DecisionRecord:
    result: Any = None
    choice, reason = "failed", None
    asked, at = (symbol, instant) if view is None else (view.symbol(symbol), view.instant(instant))
    with decision(asked, at) as scope:
        try:
            if spec.desk == "desk":
                result = await runner.analyze(_desk_request(settings, asked, at, setup))
            else:
                check, result = await _screen(runner, asked, at)
                if result is None:  # the pre-filter's no: the desk never ran
                    choice, reason = "filtered", "; ".join(check.reasons) or None
        except (LookAheadError, CacheMiss):
            raise
        except Exception as exc:  # one decision's surprise is a counted failure, not the end
            logger.exception("deciding %s at %s failed", symbol, instant)
            reason = f"error {type(exc).__name__}: {exc}"
    if result is not None:
        choice, reason = result.decision, result.reason
    return DecisionRecord(
        symbol=symbol,
        as_of=instant,
        decision=choice,
        reason=reason,
        model_calls=scope.model_calls,
        model_cost_usd=scope.model_cost_usd,
        live_calls=scope.live_calls,
        run_id=getattr(result, "run_id", None),
        conviction=_conviction(result),
        put=_put(result),
    )


def _conviction(result: Any) -> float | None:
    """The trading desk judge's conviction (what the fund's manager sizes a BUY by)."""
    final = getattr(result, "final", None)
    return getattr(final, "conviction", None)


def _desk_request(
    settings: Settings, symbol: str, instant: datetime, setup: DeskSettings | None
) -> Any:
    from alphadesk.pipelines.desk.models import DeskRequest

    if setup is not None:
        settings = settings.model_copy(update={"desk": setup})
    # The desk recalls only a walk's own memory, whose lessons the walk writes between its
    # days (:mod:`.memory`): a rerun asks the same questions.
    return DeskRequest.from_settings(
        settings, symbol=symbol, as_of=instant, memory=settings.memory.enabled
    )


async def _screen(runner: PipelineRunner[Any, Any], symbol: str, instant: datetime) -> Any:
    from alphadesk.pipelines.screen.prefilter import screen_symbol

    return await screen_symbol(runner, symbol, instant)


def _put(result: Any) -> PutRecord | None:
    synthesis = getattr(result, "synthesis", None)
    if result is None or result.decision != "select" or synthesis is None:
        return None
    position = synthesis.suggested_position
    return PutRecord(
        expiration=position.expiration,
        strike=position.strike,
        premium=position.premium,
        contracts=position.contracts,
    )


def fill_positions(records: Sequence[DecisionRecord], long_short: bool) -> None:
    """Fill each trading decision's resulting position, symbol by symbol in date order."""
    by_symbol: dict[str, list[DecisionRecord]] = {}
    for record in records:
        by_symbol.setdefault(record.symbol, []).append(record)
    for series in by_symbol.values():
        series.sort(key=lambda r: r.as_of)
        held = positions_from_decisions([r.decision for r in series], long_short=long_short)
        for record, position in zip(series, held, strict=True):
            record.position = position

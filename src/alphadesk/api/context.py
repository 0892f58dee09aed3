"""What every route shares: the settings, the market, the run slots, the allowed models,
and the small steps from an HTTP body to a pipeline request (as the CLI takes them from
its options)."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from alphadesk.agent.events import EventSink
from alphadesk.api.errors import ApiError
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.data.calendar import close_on_or_before
from alphadesk.data.symbols import normalize_symbol
from alphadesk.pipelines.models import PipelineRequest
from alphadesk.pool import Runs
from alphadesk.serving import ServerConfig
from alphadesk.serving.allowed import AllowedModels
from alphadesk.serving.slots import RunSlots

__all__ = ["ApiContext", "thread_safe"]

_CHECKED = 4096  # symbol-instants remembered as having data (or being checked)


@dataclass
class ApiContext:
    """Built once when the app starts; routes read it from ``request.app.state.ctx``.
    ``runs`` is where jobs execute: the worker pool, or this process; ``pipeline_runs``
    where pipeline runs do: ``runs``, or the Temporal workers when the server has some."""

    settings: Settings
    config: ServerConfig
    market: MarketData
    runs: Runs
    pipeline_runs: Runs = field(init=False)
    slots: RunSlots = field(init=False)
    models: AllowedModels = field(init=False)
    _checks: OrderedDict[tuple[str, datetime], asyncio.Future[Any]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.slots = RunSlots(self.config.max_runs, "--max-runs")
        self.models = AllowedModels(self.settings, self.config.models)
        self._checks = OrderedDict()
        self.pipeline_runs = self.runs
        if self.config.temporal is not None:
            from alphadesk.durable.runs import TemporalRuns

            self.pipeline_runs = TemporalRuns(self.settings, self.config.temporal)

    @property
    def default_model(self) -> str:
        quick, deep = self.settings.models.quick, self.settings.models.deep
        return quick if quick == deep else f"{quick} (quick), {deep} (deep)"

    def model(self, name: str | None) -> str | None:
        """The model a request asked for, if the server allows it (422 otherwise)."""
        return self.models.check(name)

    def symbol(self, text: str) -> str:
        return normalize_symbol(text)  # InvalidSymbol -> 422 with its own message

    def as_of(self, day: date | None, symbols: Sequence[str] = ()) -> datetime:
        """A date means its close (the last session on or before it). None means now, or,
        when the data has nothing current for ``symbols``, the last close it covers for
        them (as the CLI without --as-of): the bundled history works without a date."""
        if day is None:
            from alphadesk.data.current import resolve_as_of

            return resolve_as_of(self.market, None, list(symbols), datetime.now(UTC))[0]
        try:
            return close_on_or_before(day)
        except ValueError as exc:
            raise ApiError(422, "invalid_as_of", str(exc), "pass YYYY-MM-DD") from None

    async def preflight(self, request: PipelineRequest) -> None:
        """Fail fast, before a slot is taken or a run recorded, when the symbol has no data
        at its instant (as ``PipelineRunner.preflight``, without building a pipeline).

        A symbol found at an instant is not looked up again (its bars at that instant do not
        go away), and requests for one being looked up wait for that look-up: under load
        the same symbols and days come again and again, and each check read the bars in a
        thread, on the server's CPU, before the client heard anything.

        Raises:
            DataError: e.g. NoData naming close matches for an unknown symbol.
        """
        key = (request.symbol, request.as_of)
        check = self._checks.get(key)
        if check is None:
            check = asyncio.ensure_future(
                asyncio.to_thread(self.market.daily_bars, request.symbol, request.as_of)
            )
            self._checks[key] = check
            check.add_done_callback(lambda done: self._checked(key, done))
        else:
            self._checks.move_to_end(key)
        await asyncio.shield(check)  # a client that leaves does not stop the others' check

    def _checked(self, key: tuple[str, datetime], check: asyncio.Future[Any]) -> None:
        """Forget a failed check (the data may come), and the oldest beyond the bound."""
        failed = check.cancelled() or check.exception() is not None
        if failed and self._checks.get(key) is check:
            del self._checks[key]
        while len(self._checks) > _CHECKED:
            self._checks.popitem(last=False)

    async def analyze(
        self,
        kind: str,
        model: str | None,
        request: Any,
        *,
        on_event: EventSink | None = None,
        run_id: str | None = None,
    ) -> Any:
        """One pipeline run: in a worker process (or this one), or on the Temporal workers
        when the server has some (a client that goes away then stops following; the run
        goes on)."""
        return await self.pipeline_runs.run(
            kind, request, on_event, model=self.model(model), run_id=run_id
        )


def thread_safe(sink: EventSink) -> EventSink:
    """``sink`` called on this loop's thread, whichever thread emits."""
    loop = asyncio.get_running_loop()

    def emit(event: Any) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            sink(event)
        else:
            loop.call_soon_threadsafe(sink, event)

    return emit

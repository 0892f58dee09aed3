"""The pipelines the assistant can call as tools, each behind a ``DeskRunner``.

The desk tools live in ``tools/assistant/desks.py`` (one ``desk_tool`` line each); their
runners are registered here, in :func:`desk_runners`: a ``PipelineTool`` builds its
pipeline through the registry (the assistant is one tier above the pipelines it calls),
makes the request and says the decision in short.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from alphadesk.agent.events import EventSink
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.pipelines.models import PipelineRequest
from alphadesk.tools.assistant.deps import SCREEN_DESK, DeskRunner, DeskVerdict

if TYPE_CHECKING:
    from alphadesk.pipelines.csp.models import CspResult
    from alphadesk.pipelines.desk.models import DeskResult

__all__ = ["PipelineTool", "ScreenTool", "csp_verdict", "desk_runners"]

_LISTED = 5  # selected puts a screen's verdict lists


@dataclass(frozen=True)
class PipelineTool:
    """A pipeline the assistant calls as a tool: built through the registry, run at quick
    depth and recorded as a run of its own, its decision said in short."""

    kind: str
    settings: Settings
    market: MarketData
    model: str | None
    request: Callable[[Settings, str, datetime], PipelineRequest]
    verdict: Callable[[Any], DeskVerdict]
    on_event: EventSink | None = None  # who follows the desk's run (e.g. a progress bar)

    async def run(self, symbol: str, as_of: datetime) -> DeskVerdict:
        from alphadesk.pipelines.base import build_pipeline
        from alphadesk.pipelines.runner import PipelineRunner

        pipeline = build_pipeline(self.kind, self.settings, self.market, model=self.model)
        result = await PipelineRunner(self.settings, pipeline, on_event=self.on_event).analyze(
            self.request(self.settings, symbol, as_of)
        )
        assert result is not None  # no interrupt was asked for
        return self.verdict(result)


def _csp_request(_settings: Settings, symbol: str, as_of: datetime) -> PipelineRequest:
    from alphadesk.pipelines.csp.models import CspRequest

    return CspRequest(symbol=symbol, as_of=as_of, depth="quick")


def _trading_request(settings: Settings, symbol: str, as_of: datetime) -> PipelineRequest:
    from alphadesk.pipelines.desk.models import DeskRequest

    # The settings' debate and risk rounds, at quick depth.
    return DeskRequest.from_settings(settings, symbol=symbol, as_of=as_of, depth="quick")


def csp_verdict(result: CspResult) -> DeskVerdict:
    if result.synthesis is not None:
        position = result.synthesis.suggested_position
        summary = (
            f"Sell {position.contracts} {position.symbol} {position.expiration} "
            f"{position.strike:g} put for {position.premium}. {result.synthesis.rationale}"
        )
        details = position.model_dump(mode="json")
    else:
        summary = f"{result.stage or 'desk'}: {result.reason or 'no reason given'}"
        details = {}
    return DeskVerdict(
        desk="csp",
        symbol=result.symbol,
        decision=result.decision,
        summary=summary,
        details=details,
        run_id=result.run_id,
    )


def _trading_verdict(result: DeskResult) -> DeskVerdict:
    final = result.final
    if final is None:
        summary = f"{result.stage or 'desk'}: {result.reason or 'no reason given'}"
        details = {}
    else:
        summary = f"{final.action} {final.size_fraction:.0%} of capital. {final.rationale}"
        details = final.model_dump(mode="json", include={
            "action", "size_fraction", "entry", "stop", "target", "horizon_days", "conviction"
        })  # fmt: skip
    return DeskVerdict(
        desk="trading",
        symbol=result.symbol,
        decision=result.decision,
        summary=summary,
        details=details,
        run_id=result.run_id,
    )


@dataclass(frozen=True)
class ScreenTool:
    """The CSP screen over an index's members at one instant, as the assistant calls it:
    recorded as a screen run of its own, its selected puts said in short."""

    settings: Settings
    market: MarketData
    model: str | None
    on_event: EventSink | None = None

    async def run(self, symbol: str, as_of: datetime) -> DeskVerdict:
        from alphadesk.data.calendar import local_date
        from alphadesk.data.errors import NoData
        from alphadesk.data.universe import bundled_membership
        from alphadesk.pipelines.base import pipeline_class
        from alphadesk.pipelines.runner import PipelineRunner
        from alphadesk.pipelines.screen.models import ScreenRequest

        universe = symbol
        day = local_date(as_of)
        members = {m.symbol for m in bundled_membership().members(universe, day)}
        # Members whose bars reach this day: one with data only years later is no candidate.
        covered = sorted(
            c.symbol
            for c in self.market.coverage()
            if c.symbol in members and any(start <= day <= end for start, end in c.ranges)
        )
        if not covered:
            raise NoData(f"no member of the {universe} on {local_date(as_of)} has data here")
        request = ScreenRequest(symbols=covered, dates=[as_of], universe=universe,
                                depth="quick", model=self.model)  # fmt: skip
        # In this process: a chat's process is not forked into workers mid-question.
        pipeline = pipeline_class("screen")(self.settings, self.market, model=self.model,
                                            workers=1)  # fmt: skip
        result = await PipelineRunner(self.settings, pipeline, on_event=self.on_event).analyze(
            request
        )
        assert result is not None  # no interrupt was asked for
        screen = result.screens[-1]
        picks = [csp_verdict(r) for r in screen.results if r.decision == "select"][:_LISTED]
        counts = result.counts
        summary = (
            f"{counts.symbol_dates} members screened, {counts.filtered} filtered out, "
            f"{counts.analysed} analysed, {counts.selected} puts selected"
        )
        puts = "; ".join(
            f"{p.symbol} {p.details['expiration']} {p.details['strike']:g} put for "
            f"{p.details['premium']}"
            for p in picks
        )
        summary += f"; best first: {puts}." if picks else "."
        return DeskVerdict(
            desk="csp_screen",
            symbol=universe,
            decision="select" if picks else "none",
            summary=summary,
            details={"selected": [p.details for p in picks]},
            run_id=result.run_id,
        )


def desk_runners(
    settings: Settings,
    market: MarketData,
    model: str | None,
    on_event: EventSink | None = None,
) -> dict[str, DeskRunner]:
    """Every desk the assistant may call, by the name its tool uses; ``on_event`` gets
    the events of each desk run."""
    return {
        "csp": PipelineTool("csp", settings, market, model, _csp_request, csp_verdict, on_event),
        "trading": PipelineTool(
            "desk", settings, market, model, _trading_request, _trading_verdict, on_event
        ),
        SCREEN_DESK: ScreenTool(settings, market, model, on_event),
    }

"""The desks the assistant can call as tools, each behind a ``DeskRunner``.

The desk tools live in ``tools/assistant/desks.py`` (one ``desk_tool`` line each); their runners
are registered here, in :func:`desk_runners`: a runner builds the desk's request and says
its decision in short.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.tools.assistant.deps import DeskRunner, DeskVerdict

if TYPE_CHECKING:
    from alphadesk.pipelines.csp.models import CspResult
    from alphadesk.pipelines.desk.models import DeskResult

__all__ = ["CspDeskRunner", "TradingDeskRunner", "desk_runners"]


class CspDeskRunner:
    """The cash-secured-put desk at quick depth, recorded as its own run."""

    def __init__(self, settings: Settings, market: MarketData, model: str | None) -> None:
        self.settings, self.market, self.model = settings, market, model

    async def run(self, symbol: str, as_of: datetime) -> DeskVerdict:
        from alphadesk.pipelines.csp.models import CspRequest
        from alphadesk.pipelines.csp.pipeline import CspPipeline
        from alphadesk.pipelines.runner import PipelineRunner

        pipeline = CspPipeline(self.settings, self.market, model=self.model)
        runner = PipelineRunner(self.settings, pipeline)
        result = await runner.analyze(CspRequest(symbol=symbol, as_of=as_of, depth="quick"))
        assert result is not None  # no interrupt was asked for
        return _verdict(result)


def _verdict(result: CspResult) -> DeskVerdict:
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


class TradingDeskRunner:
    """The trading desk at quick depth with the settings' rounds, recorded as its own run."""

    def __init__(self, settings: Settings, market: MarketData, model: str | None) -> None:
        self.settings, self.market, self.model = settings, market, model

    async def run(self, symbol: str, as_of: datetime) -> DeskVerdict:
        from alphadesk.pipelines.desk.desk import TradingDesk
        from alphadesk.pipelines.desk.models import DeskRequest
        from alphadesk.pipelines.runner import PipelineRunner

        desk = TradingDesk(self.settings, self.market, model=self.model)
        request = DeskRequest.from_settings(
            self.settings, symbol=symbol, as_of=as_of, depth="quick"
        )
        result = await PipelineRunner(self.settings, desk).analyze(request)
        assert result is not None  # no interrupt was asked for
        return _trading_verdict(result)


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


def desk_runners(
    settings: Settings, market: MarketData, model: str | None
) -> dict[str, DeskRunner]:
    """Every desk the assistant may call, by the name its tool uses."""
    return {
        "csp": CspDeskRunner(settings, market, model),
        "trading": TradingDeskRunner(settings, market, model),
    }

"""The desks the assistant can call as tools, each behind a ``DeskRunner``.

The desk tools live in ``tools/desks.py`` (one ``desk_tool`` line each); their runners
are registered here, in :func:`desk_runners`. The trading desk joins with a runner class
like :class:`CspDeskRunner` and one line in that function.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.tools.chat_deps import DeskRunner, DeskVerdict

if TYPE_CHECKING:
    from alphadesk.pipelines.csp.models import CspResult

__all__ = ["CspDeskRunner", "desk_runners"]


class CspDeskRunner:
    """The cash-secured-put desk at quick depth, recorded as its own run."""

    def __init__(self, settings: Settings, market: MarketData, model: str | None) -> None:
        self.settings, self.market, self.model = settings, market, model

    async def run(self, symbol: str, as_of: datetime) -> DeskVerdict:
        from alphadesk.pipelines.csp.models import CspRequest
        from alphadesk.pipelines.csp.run import CspRunner

        runner = CspRunner(self.settings, self.market, model=self.model)
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


def desk_runners(
    settings: Settings, market: MarketData, model: str | None
) -> dict[str, DeskRunner]:
    """Every desk the assistant may call, by the name its tool uses."""
    return {
        "csp": CspDeskRunner(settings, market, model),
        # "trading": TradingDeskRunner(settings, market, model),
    }

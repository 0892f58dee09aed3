"""Running the cash-secured-put desk through the shared runner: one recorded, resumable run
per symbol, saved with its report, JSON result and charts."""

from __future__ import annotations

from collections.abc import Mapping

from alphadesk.agent.events import EventSink
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.llm.base import Model
from alphadesk.pipelines.csp.desk import CspDesk
from alphadesk.pipelines.csp.models import CspRequest, CspResult
from alphadesk.pipelines.runner import PipelineRunner

__all__ = ["CspRunner"]


class CspRunner(PipelineRunner[CspRequest, CspResult]):
    """The CSP desk under the shared runner, at most ``concurrency`` symbols at a time."""

    desk: CspDesk

    def __init__(
        self,
        settings: Settings,
        market: MarketData,
        *,
        model: str | None = None,
        models: Mapping[str, Model] | None = None,
        on_event: EventSink | None = None,
        concurrency: int = 4,
        charts: bool = True,
    ) -> None:
        desk = CspDesk(settings, market, model=model, models=models)
        super().__init__(settings, desk, on_event=on_event, concurrency=concurrency, charts=charts)

"""What every tool needs from its run, carried in ``RunContext.deps``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from alphadesk.data.base import MarketData

__all__ = ["ToolDeps"]


@dataclass(frozen=True)
class ToolDeps:
    """Dependencies of the market tools. Pipelines subclass it to add their own.

    Attributes:
        market: Point-in-time market data (the provider chain built from settings).
        run_dir: Where tools save artifacts such as chart images; None to keep nothing.
    """

    market: MarketData
    run_dir: Path | None = None

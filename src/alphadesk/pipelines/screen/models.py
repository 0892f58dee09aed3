"""The screen's request, its state's outcomes and its result."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo

from pydantic import AwareDatetime, BaseModel, Field, model_validator

from alphadesk.agents.csp.models import CspConstraints
from alphadesk.data.calendar import NEW_YORK
from alphadesk.data.universe import bundled_membership
from alphadesk.pipelines.csp.models import CspRequest, CspResult, Depth
from alphadesk.pipelines.models import PipelineRequest, PipelineResult
from alphadesk.pipelines.screen.prefilter import ScreenCheck, ScreenResult

__all__ = ["Outcome", "ScreenCounts", "ScreenHistory", "ScreenOutcome", "ScreenRequest"]

# One symbol on one date: the pre-filter's check and, if it passed, the desk's result.
Outcome = tuple[datetime, ScreenCheck, CspResult | None]


class ScreenRequest(PipelineRequest):
    """A universe to screen on one or more dates (session closes)."""

    # Both set from the fields below (any value given is replaced), so nobody passes them.
    symbol: str = Field("", description="What is screened: the index, or the symbols.")
    as_of: datetime = Field(datetime.min.replace(tzinfo=UTC), description="The last date.")
    symbols: list[str] = Field(min_length=1)
    dates: list[AwareDatetime] = Field(min_length=1)  # point in time needs a zone
    depth: Depth = "quick"
    model: str | None = Field(None, description="Every agent's model; None: the settings.")
    constraints: CspConstraints = Field(default_factory=CspConstraints)
    universe: str | None = Field(
        None,
        description="An index (sp500, nasdaq100, dow30): on each date only its members of "
        "that day among `symbols` are screened.",
    )

    @model_validator(mode="before")
    @classmethod
    def _derived(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        symbols, dates = data.get("symbols"), data.get("dates")
        if not isinstance(symbols, list) or not isinstance(dates, list) or not dates:
            return data  # the field validators say what is wrong
        label = data.get("universe") or (
            ", ".join(map(str, symbols)) if len(symbols) <= 3 else f"{len(symbols)} symbols"
        )
        return {**data, "symbol": label, "as_of": dates[-1]}

    def symbols_on(self, day: datetime) -> list[str]:
        """The symbols screened on ``day``: the index members of that day, if any index."""
        if self.universe is None:
            return self.symbols
        session = day.astimezone(ZoneInfo(NEW_YORK)).date()
        members = {m.symbol for m in bundled_membership().members(self.universe, session)}
        return [s for s in self.symbols if s in members]

    def desk_requests(self) -> list[CspRequest]:
        """One desk request per symbol and date screened."""
        return [
            CspRequest(symbol=s, as_of=day, depth=self.depth, constraints=self.constraints)
            for day in self.dates
            for s in self.symbols_on(day)
        ]


class ScreenOutcome(BaseModel):
    """One symbol-date of a screen as its graph state keeps it: the pre-filter's check and,
    if it passed, the desk's result."""

    as_of: AwareDatetime
    check: ScreenCheck
    result: CspResult | None

    @classmethod
    def of(cls, outcome: Outcome) -> ScreenOutcome:
        day, check, result = outcome
        return cls(as_of=day, check=check, result=result)

    @property
    def outcome(self) -> Outcome:
        return self.as_of, self.check, self.result


class ScreenCounts(BaseModel):
    """How a screen's symbol-dates ended."""

    dates: int
    symbol_dates: int
    filtered: int = Field(description="Turned away by the pre-filter, before any model call.")
    errors: int = Field(description="Failed unexpectedly: neither filtered nor analysed.")
    analysed: int
    selected: int
    failed: int = Field(description="Desk runs that failed.")


class ScreenHistory(PipelineResult):
    """Every date's screen, its counts, and where the table of all outcomes was saved."""

    decision: Literal["completed"] = "completed"
    screens: list[ScreenResult]
    counts: ScreenCounts
    table: list[Path] = Field(description="candidates.csv and candidates.parquet")

    @property
    def outcomes(self) -> int:
        return sum(len(s.checks) for s in self.screens)

    def decided(self) -> dict[str, Any]:
        """Every symbol-date's check and what the desk decided (not its runs, their timings
        nor the table's folder): what a replay of the screen must reproduce."""
        return {
            "counts": self.counts.model_dump(mode="json"),
            "screens": [
                {
                    "as_of": screen.as_of.isoformat(),
                    "checks": [check.model_dump(mode="json") for check in screen.checks],
                    "results": [result.decided() for result in screen.results],
                }
                for screen in self.screens
            ],
        }

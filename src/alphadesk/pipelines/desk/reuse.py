"""An analyst's report reused while what it read is unchanged.

A portfolio decides the same names day after day, and much of what an analyst reads does
not move from one day to the next (a quarter's filings, a quiet news week, the sources
that are not there offline). :class:`AnalystReports` keeps each analyst's report on each
symbol under the exact inputs it read: the tool calls it made and what each returned.
Before an analyst is asked again about that symbol, its recorded tool calls are made
again at the new instant (the tools are deterministic reads of point-in-time data, no
model call); when every result is what it was relative to the instant (the dates of the
session of ``as_of``, of the one before and of the one after it read as those three
names wherever they appear), the kept report is the analyst's answer and the model is
not asked: kept with its dates read the same way, and given with them as of the new
instant (a report that says "no ^VIX bar within 10 days of 2025-03-03" says it of
2025-03-04 the next day, as the analyst would). Any other change, a tool error, or a
first sight of the symbol asks the model. The desk that owns the object reuses; nothing
is kept between desks or processes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel

from alphadesk.agent import RunContext
from alphadesk.agent.tools import render_result
from alphadesk.agents.spec import AgentSpec
from alphadesk.data.calendar import NEW_YORK, sessions_between
from alphadesk.llm.messages import text_of
from alphadesk.pipelines.agent_steps import StepOutcome, ToolRead

__all__ = ["AnalystReports", "Kept"]


@dataclass(frozen=True)
class Kept:
    """A report (its JSON, relative to its instant) and the data its tools said was
    missing; :meth:`at` gives them as of another instant."""

    kind: type[BaseModel]
    output: str
    missing: list[str]

    def at(self, as_of: datetime) -> tuple[Any, list[str]]:
        """The report and the missing data, their dates as of ``as_of``."""
        names = _relative(as_of)
        report = self.kind.model_validate_json(_unmask(self.output, names))
        return report, [_unmask(m, names) for m in self.missing]


class AnalystReports:
    """Reports of the analysts of one desk, each keyed by the analyst, the symbol and the
    exact inputs it read (see the module docstring). ``asked`` and ``reused`` count the
    lookups that went to the model and those that did not."""

    def __init__(self) -> None:
        self._reads: dict[tuple[str, str], list[ToolRead]] = {}
        self._kept: dict[tuple[str, str, str], Kept] = {}
        self.asked = self.reused = 0

    async def find(
        self, spec: AgentSpec[Any, Any], symbol: str, deps: Any, as_of: datetime, run_id: str
    ) -> Kept | None:
        """The report ``spec`` gave on ``symbol`` when its tools last read what they read
        at ``as_of``, if any."""
        reads = self._reads.get((spec.name, symbol))
        kept = None
        if reads is not None:
            inputs = await _read_again(spec, reads, deps, as_of, run_id)
            if inputs is not None:
                kept = self._kept.get((spec.name, symbol, inputs))
        if kept is None:
            self.asked += 1
        else:
            self.reused += 1
        return kept

    def keep(self, symbol: str, as_of: datetime, step: StepOutcome[Any]) -> None:
        """Keep ``step``'s report on ``symbol`` at ``as_of`` under what its tools read."""
        output = step.output
        if step.failure is not None or not isinstance(output, BaseModel):
            return
        self._reads[(step.agent, symbol)] = step.reads
        key = _digest([r.result for r in step.reads], as_of)
        names = _relative(as_of)
        masked = [_mask(m, names) for m in step.missing]
        kept = Kept(type(output), _mask(output.model_dump_json(), names), masked)
        self._kept[(step.agent, symbol, key)] = kept


async def _read_again(
    spec: AgentSpec[Any, Any], reads: list[ToolRead], deps: Any, as_of: datetime, run_id: str
) -> str | None:
    """The digest of what ``reads``' tool calls return at ``as_of``; None if one fails."""
    results = []
    for read in reads:
        tool = spec.agent.toolset.get(read.tool)
        if tool is None:
            return None
        ctx = RunContext(deps=deps, as_of=as_of, run_id=run_id, agent=spec.name)
        try:
            value = await tool.call(ctx, tool.validate(read.arguments))
        except Exception:  # a tool that cannot answer now: the model is asked, as usual
            return None
        rendered = render_result(value)
        results.append(rendered if isinstance(rendered, str) else text_of(rendered))
    return _digest(results, as_of)


def _digest(results: list[str], as_of: datetime) -> str:
    """What the tools returned, relative to the instant: two days compare."""
    text = _mask("\x00".join(results), _relative(as_of))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _relative(as_of: datetime) -> dict[str, str]:
    """The dates that are the instant's session, the one before and the one after, by
    the name each is read as."""
    day = as_of.astimezone(ZoneInfo(NEW_YORK)).date()
    near = sessions_between(day - timedelta(days=14), day + timedelta(days=14))
    names = {day.isoformat(): "{session}"}
    before = [d for d in near if d < day]
    after = [d for d in near if d > day]
    if before:
        names[before[-1].isoformat()] = "{session before}"
    if after:
        names[after[0].isoformat()] = "{session after}"
    return names


def _mask(text: str, names: dict[str, str]) -> str:
    for when, name in names.items():
        text = text.replace(when, name)
    return text


def _unmask(text: str, names: dict[str, str]) -> str:
    for when, name in names.items():
        text = text.replace(name, when)
    return text

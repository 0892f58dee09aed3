"""A live Rich view of a pipeline run: each agent's state, tool calls, tokens, cost, time,
and the latest lines of a debate as they are spoken (or of a lab's gate decisions)."""

from __future__ import annotations

import textwrap
import time
from collections import deque
from dataclasses import dataclass, field

from rich.console import Group, RenderableType
from rich.live import Live
from rich.text import Text

from alphadesk.agent.events import BaseEvent, ToolStarted, UsageUpdated
from alphadesk.cli.common import console, err_console
from alphadesk.cli.tables import Column, FitTable
from alphadesk.pipelines.events import (
    DebateMessage,
    GateDecided,
    ReflectionWritten,
    StepFinished,
    StepStarted,
)

__all__ = ["LiveView"]

_STYLE = {
    "waiting": "dim",
    "running": "yellow",
    "completed": "green",
    "rejected": "magenta",
    "failed": "bold red",
    "cancelled": "dim",
}
_DEBATE_LINES = 8  # the latest turns shown under the table
_SPEAKER_STYLE = {"bull": "green", "bear": "red", "risky": "magenta", "safe": "cyan"}


@dataclass
class _Row:
    symbol: str
    agent: str
    model: str = "-"
    status: str = "waiting"
    tools: int = 0
    last_tool: str = ""
    tokens: int = 0
    cost: float = 0.0
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    note: str = ""


class LiveView:
    """Consumes events (``view.on_event``) and redraws a table; a context manager.

    When the table cannot be watched (stdout is not a terminal, or ``enabled`` is off for
    ``--json``), each agent's start and finish is a plain line on stderr instead, so a log
    or a pipe shows progress as it happens and stdout keeps only the result.
    """

    def __init__(self, *, enabled: bool = True) -> None:
        self._rows: dict[tuple[str, str], _Row] = {}
        self._by_run: dict[str, str] = {}  # run id -> symbol
        self._lines: deque[Text] = deque(maxlen=_DEBATE_LINES)
        self._live = Live(self._render(), console=console, refresh_per_second=8, transient=False)
        self._enabled = enabled
        self._plain = not (enabled and console.is_terminal)

    def __enter__(self) -> LiveView:
        if self._enabled:
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._enabled:
            # Nothing ran (a run refused before its first step): no empty table is left.
            self._live.update(self._render() if self._rows else "")
            self._live.__exit__(None, None, None)
            if self._rows:
                console.print()  # the report starts on a line of its own

    def on_event(self, event: BaseEvent) -> None:
        if isinstance(event, StepStarted):
            self._by_run[event.run_id] = event.symbol
            row = self._row(event.symbol, event.agent)
            row.status, row.model, row.started = "running", event.model, time.monotonic()
            self._say(f"{row.symbol} {row.agent}: started ({row.model})")
        elif isinstance(event, StepFinished):
            row = self._row(event.symbol, event.agent)
            row.status, row.ended, row.note = event.status, time.monotonic(), event.reason or ""
            note = f": {_short(row.note, 160)}" if row.note else ""
            self._say(
                f"{row.symbol} {row.agent}: {row.status} in {row.ended - row.started:.1f}s{note}"
            )
        elif isinstance(event, ToolStarted):
            row = self._row(self._symbol(event.run_id), event.agent)
            row.tools += 1
            row.last_tool = event.tool
        elif isinstance(event, DebateMessage | ReflectionWritten | GateDecided):
            self._lines.append(_line(event))
        elif isinstance(event, UsageUpdated):
            row = self._row(self._symbol(event.run_id), event.agent)
            row.tokens = event.agent_usage.total_tokens
            row.cost = event.agent_usage.cost_usd
        else:
            return
        if self._enabled:
            self._live.update(self._render())

    def _say(self, line: str) -> None:
        if self._plain:
            err_console.print(line, highlight=False, markup=False, soft_wrap=True)

    def _symbol(self, run_id: str) -> str:
        return self._by_run.get(run_id, "?")

    def _row(self, symbol: str, agent: str) -> _Row:
        return self._rows.setdefault((symbol, agent), _Row(symbol, agent))

    def _render(self) -> RenderableType:
        table = FitTable(
            "symbol",
            "agent",
            "state",
            Column("tools", right=True),
            Column("tokens", right=True),
            Column("cost $", right=True),
            Column("time", right=True),
            Column("model", text=True),
            Column("detail", text=True),
        )
        now = time.monotonic()
        for row in self._rows.values():
            elapsed = (row.ended or now) - row.started
            detail = row.note if row.ended else row.last_tool
            table.add_row(
                row.symbol,
                row.agent,
                Text(row.status, style=_STYLE.get(row.status, "")),
                str(row.tools),
                str(row.tokens),
                f"{row.cost:.4f}",
                f"{elapsed:.1f}s",
                row.model,
                Text(_short(detail), style="dim"),
            )
        return Group(table, *self._lines)


def _line(event: DebateMessage | ReflectionWritten | GateDecided) -> Text:
    """A debate turn (or a reflection) as one line: who, which round, what was said."""
    if isinstance(event, GateDecided):
        text = Text(f"{event.symbol} iteration {event.iteration} ", style="dim")
        text.append(
            f"{event.decision}", style="bold green" if event.decision == "SUCCESS" else "bold"
        )
        text.append(f" (best {event.best_variant}, score {event.best_score:.2f}): ")
        text.append(_short(event.reasoning))
        return text
    if isinstance(event, ReflectionWritten):
        text = Text(f"{event.symbol} memory: ", style="bold blue")
        text.append(f"{event.action} of {event.decided_at.date()}: {event.lesson}")
        return text
    number = f"{event.conviction:.2f}" if event.conviction is not None else f"{event.size:.2f}"
    text = Text(f"{event.symbol} {event.debate} r{event.round} ", style="dim")
    verb = " answers" if event.part == "rebuttal" else ""
    style = _SPEAKER_STYLE.get(event.agent, "yellow")
    text.append(f"{event.agent}{verb} ({number}): ", style=style)
    text.append(_short(event.text))
    return text


def _short(text: str, limit: int = 240) -> str:
    """Free text shortened at a word, never inside one: the whole is in the report."""
    return textwrap.shorten(text, limit, placeholder=" …") if text else ""

"""A run's progress as the UI shows it, folded from its stream of events: each agent's
state and tool calls, the debate as it is spoken, and the result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["AgentRow", "Progress"]


@dataclass
class AgentRow:
    agent: str
    symbol: str = ""
    model: str = "-"
    status: str = "running"
    tools: int = 0
    last_tool: str = ""
    note: str = ""


@dataclass
class Progress:
    """Feed it every event (``progress.add(name, data)``); read the rows, the debate and
    the result back."""

    run_id: str | None = None
    as_of: str | None = None  # the instant the run analyses at, once the server said it
    agents: dict[tuple[str, str], AgentRow] = field(default_factory=dict)
    debate: list[str] = field(default_factory=list)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    events: int = 0

    def add(self, name: str, data: Any) -> None:
        self.events += 1
        if isinstance(data, dict) and data.get("run_id") and self.run_id is None:
            self.run_id = str(data["run_id"])
        handler = getattr(self, f"_on_{name}", None)
        if handler is not None:
            handler(data)

    def rows(self) -> list[dict[str, Any]]:
        return [vars(row).copy() for row in self.agents.values()]

    def _row(self, data: dict[str, Any]) -> AgentRow:
        """The row of an agent on a symbol (a fund runs the same agents on many); an event
        that names no symbol (a tool call) goes to the agent's latest row."""
        name, symbol = str(data.get("agent", "?")), str(data.get("symbol") or "")
        if not symbol:
            mine = [key for key in self.agents if key[0] == name]
            if mine:
                return self.agents[mine[-1]]
        return self.agents.setdefault((name, symbol), AgentRow(agent=name, symbol=symbol))

    def _on_step_started(self, data: dict[str, Any]) -> None:
        row = self._row(data)
        row.model, row.status = str(data.get("model", "-")), "running"

    def _on_step_finished(self, data: dict[str, Any]) -> None:
        row = self._row(data)
        row.status, row.note = str(data["status"]), str(data.get("reason") or "")

    def _on_tool_started(self, data: dict[str, Any]) -> None:
        row = self._row(data)
        row.tools += 1
        row.last_tool = str(data["tool"])

    def _on_tool_failed(self, data: dict[str, Any]) -> None:
        self._row(data).note = f"{data['tool']}: {str(data['error'])[:80]}"

    def _on_debate_message(self, data: dict[str, Any]) -> None:
        size = f" (size {data['size']:.2f})" if data.get("size") is not None else ""
        conviction = (
            f" (conviction {data['conviction']:.2f})" if data.get("conviction") is not None else ""
        )
        verb = " answers" if data.get("part") == "rebuttal" else ""
        self.debate.append(
            f"**{data['agent']}**{verb}, {data['debate']} round {data['round']}"
            f"{conviction}{size}: {data['text']}"
        )

    def _on_accepted(self, data: dict[str, Any]) -> None:
        self.as_of = (data.get("request") or {}).get("as_of") or self.as_of

    def _on_result(self, data: dict[str, Any]) -> None:
        self.result = data
        self.run_id = data.get("run_id") or self.run_id
        self.as_of = data.get("as_of") or self.as_of

    def _on_error(self, data: dict[str, Any]) -> None:
        self.error = data.get("error", data)

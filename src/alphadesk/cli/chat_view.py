"""Rendering the assistant's events on a terminal: progress on stderr as it happens, the
answer on stdout token by token, then the figures it could not trace."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from rich.console import Console

from alphadesk.cli.common import console, err_console

if TYPE_CHECKING:
    from alphadesk.agent.events import BaseEvent, TextDelta, ToolFailed, ToolFinished, ToolStarted
    from alphadesk.pipelines.assistant.events import (
        ChatFinished,
        Classified,
        ContextResolved,
        NumbersChecked,
        Routed,
        StateChanged,
    )

__all__ = ["ChatView"]

_ARGS = 60


class ChatView:
    """Consumes the assistant's events (``view.on_event``) and prints them."""

    def __init__(self, *, out: Console = console, progress: Console = err_console) -> None:
        self.out, self.progress = out, progress
        self._streaming = False

    def on_event(self, event: BaseEvent) -> None:
        handler = getattr(self, f"_on_{getattr(event, 'kind', '')}", None)
        if handler is not None:
            handler(event)

    def _note(self, text: str, style: str = "dim") -> None:
        if self._streaming:  # progress between pieces of the answer starts a new line
            self.out.print()
            self._streaming = False
        self.progress.print(text, style=style, markup=False, highlight=False)

    def _on_state(self, event: StateChanged) -> None:
        if event.state == "ERROR":
            self._note(f"✗ {event.reason}", "bold red")
        elif event.state != "IDLE":
            self._note(f"· {event.state.lower()}")

    def _on_context(self, event: ContextResolved) -> None:
        if event.note:
            self._note(f"· {event.note}")

    def _on_classified(self, event: Classified) -> None:
        c = event.classification
        symbols = ", ".join(c.symbols) or "no symbols"
        self._note(f"· {c.question_type.replace('_', ' ')} question, {symbols}")

    def _on_routed(self, event: Routed) -> None:
        d = event.decision
        tools = ", ".join(d.selected_tools) or "no tools"
        turns = f", up to {event.max_turns} turns" if d.strategy == "ITERATIVE" else ""
        self._note(f"· {d.strategy} ({d.complexity}{turns}): {tools}")

    def _on_tool_started(self, event: ToolStarted) -> None:
        if event.agent == "classifier":
            return
        args = ", ".join(f"{k}={v}" for k, v in json.loads(event.arguments or "{}").items())
        self._note(f"  → {event.tool}({args[:_ARGS]})")

    def _on_tool_finished(self, event: ToolFinished) -> None:
        if event.agent != "classifier":
            self._note(f"  ✓ {event.tool} {event.seconds:.2f}s", "green")

    def _on_tool_failed(self, event: ToolFailed) -> None:
        self._note(f"  ✗ {event.tool}: {event.error[:200]}", "yellow")

    def _on_text_delta(self, event: TextDelta) -> None:
        if event.agent != "answer":
            return
        self._streaming = True
        self.out.print(event.text, end="", markup=False, highlight=False, soft_wrap=True)

    def _on_numbers_checked(self, event: NumbersChecked) -> None:
        if self._streaming:
            self.out.print()
            self._streaming = False
        if event.check.unverified:
            figures = ", ".join(event.check.unverified)
            self.progress.print(
                f"⚠ figures not found in any tool result: {figures}",
                style="bold yellow",
                markup=False,
            )

    def _on_chat_finished(self, event: ChatFinished) -> None:
        r = event.result
        if self._streaming:
            self.out.print()
            self._streaming = False
        models = ", ".join(sorted(set(r.models.values())))
        self._note(
            f"run {r.run_id} · session {r.session_id} · {r.seconds:.1f}s · {models} · "
            f"{r.usage.total_tokens} tokens · ${r.usage.cost_usd:.4f}"
        )

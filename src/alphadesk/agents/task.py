"""An agent's task as data: the object its prompt text is rendered from.

A task has one typed field per value its template shows (the symbol, the instant, the
context). An LLM reads the rendered text; the task object travels with that text in the
user message (``UserMessage.task``, left out of cache keys and never sent), so an offline
``rules`` policy reads named, typed fields instead of parsing the text back.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, fields
from datetime import datetime
from string import Template
from typing import Any, ClassVar

from pydantic import BaseModel

from alphadesk.agents.spec import load_prompt
from alphadesk.kept import Kept
from alphadesk.llm.messages import UserMessage

__all__ = ["AgentTask", "SymbolTask", "render_value"]


def render_value(value: Any) -> str:
    """How a template shows a value: numbers and text as is, anything else as JSON."""
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    # Indented JSON is written by Python code, ten times slower than the compact form, and
    # a run shows the same fact sheet and briefing to most of its agents: the indented
    # text is kept by the compact one, which determines it.
    compact = json.dumps(value, default=str)
    indented = _INDENTED.get(compact)
    if indented is None:
        indented = json.dumps(value, indent=1, default=str)
        _INDENTED.put(compact, indented)
    return indented


# Shared by the process: the agents of a run render their tasks apart, and the compact
# text determines the indented one, so a hit is what rendering again would give.
_INDENTED: Kept[str, str] = Kept(256)


@dataclass(frozen=True, kw_only=True)
class AgentTask:
    """The assignment of one agent run. Subclasses name their template and add one field
    per value the template shows."""

    package: ClassVar[str]
    template: ClassVar[str]

    def values(self) -> dict[str, str]:
        """The template's variables: every field it shows, rendered (a field it does not
        show, such as the fact sheet in a rebuttal, costs nothing)."""
        shown = _shown(self.package, self.template)
        return {f.name: self.shown_as(f.name) for f in fields(self) if f.name in shown}

    def shown_as(self, name: str) -> str:
        """How the template shows field ``name``."""
        return render_value(getattr(self, name))

    def render(self) -> str:
        """The prompt text an LLM reads."""
        return _template(self.package, self.template).substitute(self.values())

    def message(self) -> UserMessage:
        """The user message: the rendered text, carrying this task for a rules policy."""
        return UserMessage(content=self.render(), task=self)


@dataclass(frozen=True, kw_only=True)
class SymbolTask(AgentTask):
    """A task about one symbol as of one instant (its template shows the date)."""

    symbol: str
    as_of: datetime

    def shown_as(self, name: str) -> str:
        return self.as_of.date().isoformat() if name == "as_of" else super().shown_as(name)


def _template(package: str, template: str) -> Template:
    return load_prompt(package, f"{template}_task")


@functools.cache
def _shown(package: str, template: str) -> frozenset[str]:
    """The names a task template shows."""
    return frozenset(_template(package, template).get_identifiers())

"""An agent specification: the engine's Agent plus what a pipeline needs to run it anywhere.

The same spec runs with an LLM (its prompt template, toolset and output validators) or
offline with its deterministic ``rules`` policy; ``model_for`` picks which.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from importlib import resources
from string import Template
from typing import Any, Generic, Literal, TypeVar

from alphadesk.agent import Agent
from alphadesk.config import CacheMode, Settings
from alphadesk.llm.base import Model
from alphadesk.llm.rules import RULES_MODEL, RulesModel, RulesPolicy

__all__ = ["AgentSpec", "Tier", "configured", "load_prompt", "model_for"]

DepsT = TypeVar("DepsT")
OutputT = TypeVar("OutputT")
Tier = Literal["quick", "deep"]


@functools.cache
def load_prompt(package: str, name: str) -> Template:
    """A prompt template shipped next to its agent (``prompts/<name>.md``), ``$var`` syntax.

    Prompts are versioned files, not f-strings in code; the first line is a comment with
    the template's version, which the loader drops. Read once per process (every agent
    run renders one).
    """
    text = resources.files(package).joinpath("prompts", f"{name}.md").read_text("utf-8")
    lines = text.splitlines()
    if lines and lines[0].startswith("<!--"):
        lines = lines[1:]
    return Template("\n".join(lines).strip())


@dataclass(frozen=True)
class AgentSpec(Generic[DepsT, OutputT]):
    """An agent, its offline policy, its model tier and its turn budget per depth."""

    agent: Agent[DepsT, OutputT]
    policy: RulesPolicy
    tier: Tier = "quick"
    turns: dict[str, int] = field(default_factory=lambda: {"quick": 4, "standard": 8, "deep": 15})

    @property
    def name(self) -> str:
        return self.agent.name

    def at_depth(self, depth: str) -> Agent[DepsT, OutputT]:
        """The agent with the turn budget of ``depth``."""
        if depth not in self.turns:
            raise ValueError(f"unknown depth {depth!r}; use one of {sorted(self.turns)}")
        return replace(self.agent, max_turns=self.turns[depth])


def configured(agent: Agent[DepsT, OutputT], settings: Settings) -> Agent[DepsT, OutputT]:
    """``agent`` under the settings: every answer capped at ``models.max_tokens`` when set
    (e.g. a reasoning model that thinks before it answers needs more than the agent's own)."""
    cap = settings.models.max_tokens
    return agent if cap is None else replace(agent, max_tokens=cap)


def model_for(spec: AgentSpec[Any, Any], settings: Settings, override: str | None = None) -> Model:
    """The model this agent runs with: ``override``, else its per-agent or tier setting.

    ``rules`` is the agent's deterministic policy; anything else is a LiteLLM model string,
    wrapped in the response cache when the settings ask for one.
    """
    name = override or settings.models.for_agent(spec.name, spec.tier)
    if name == RULES_MODEL:
        return RulesModel(spec.policy)
    from alphadesk.llm.factory import build_model

    model = build_model(name, settings.models)
    if settings.cache is CacheMode.OFF:
        return model
    from alphadesk.llm.cache import CachedModel, ResponseCache

    return CachedModel(model, ResponseCache(settings.store_path), settings.cache)

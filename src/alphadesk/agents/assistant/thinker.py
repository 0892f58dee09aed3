"""The deep thinker behind ``think_deeply``: one call to the deep tier.

Its ``rules`` version cannot reason: it says so, restates the facts it was given and
concludes nothing beyond them, so an offline answer never passes a guess for analysis.
"""

from __future__ import annotations

from typing import Any

from alphadesk.agent import Agent, RunContext
from alphadesk.agents.assistant.tasks import (
    ThinkerTask,
)
from alphadesk.agents.spec import AgentSpec, load_prompt
from alphadesk.llm.base import Model
from alphadesk.llm.rules import RulesPolicy, Transcript

__all__ = ["THINKER", "AgentThinker"]

_PROMPTS = "alphadesk.agents.assistant"


def _decide(t: Transcript) -> str:
    context = t.task_as(ThinkerTask).context.strip() or "none"
    return (
        "REASONING:\nThe rules model does no open-ended reasoning. The facts given were:\n"
        f"{context[:1500]}\n\nCONCLUSION:\nNo deep model is configured (rules); weigh the "
        "figures above yourself, or set models.deep to an LLM for a reasoned view."
    )


thinker_policy = RulesPolicy(plan=[], decide=_decide, name="thinker")

THINKER: AgentSpec[Any, str] = AgentSpec(
    agent=Agent(
        name="thinker",
        max_tokens=1000,
        instructions=load_prompt(_PROMPTS, "thinker_system").template,
        output_type=str,
        max_turns=1,
    ),
    policy=thinker_policy,
    tier="deep",
)


class AgentThinker:
    """The thinker agent on a model, callable from a tool within the caller's run."""

    def __init__(self, model: Model) -> None:
        self.model = model

    @property
    def model_name(self) -> str:
        return self.model.name

    async def think(self, ctx: RunContext[Any], query: str, context: str | None) -> str:
        task = ThinkerTask(query=query, context=context or "none")
        result = await THINKER.agent.run(self.model, task.message(), deps=None, scope=ctx.subrun())
        return result.output

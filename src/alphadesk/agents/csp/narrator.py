"""The orchestrator's optional narrative: a model's commentary on the desk's decision.

It adds words, never numbers or a different decision. With the offline ``rules`` model
there is no narrative: the deterministic synthesis stands on its own.
"""

from __future__ import annotations

from alphadesk.agent import Agent
from alphadesk.agents.csp.deps import CspDeps
from alphadesk.agents.spec import AgentSpec, load_prompt
from alphadesk.llm.rules import RulesPolicy

__all__ = ["NARRATOR"]

NARRATOR: AgentSpec[CspDeps, str] = AgentSpec(
    agent=Agent(
        name="orchestrator",
        max_tokens=800,
        instructions=load_prompt("alphadesk.agents.csp", "narrator_system").template,
        output_type=str,
    ),
    # Never asked: the desk skips the narrative when the orchestrator model is `rules`.
    policy=RulesPolicy(plan=[], decide=lambda _t: "", name="orchestrator"),
    tier="deep",
    turns={"quick": 1, "standard": 1, "deep": 2},
)

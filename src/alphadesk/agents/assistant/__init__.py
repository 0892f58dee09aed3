"""The assistant's agents (seeds 002 and 003): classifier, router, answer writer, thinker.

Each is an AgentSpec with its prompt templates in ``prompts/`` and a ``rules`` policy for
offline runs; skills are prompt templates per asset class.
"""

from __future__ import annotations

from alphadesk.agents.assistant.answer import ANSWER, answer_agent, skill_for
from alphadesk.agents.assistant.classifier import CLASSIFIER
from alphadesk.agents.assistant.models import (
    TURN_BUDGET,
    Classification,
    PlannedToolCall,
    RouterDecision,
)
from alphadesk.agents.assistant.router import ROUTER, RouteDeps
from alphadesk.agents.assistant.thinker import THINKER, AgentThinker

__all__ = [
    "ANSWER",
    "CLASSIFIER",
    "ROUTER",
    "THINKER",
    "TURN_BUDGET",
    "AgentThinker",
    "Classification",
    "PlannedToolCall",
    "RouteDeps",
    "RouterDecision",
    "answer_agent",
    "skill_for",
]

"""The assistant's tasks: one typed object per task template (see ``agents.task``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from alphadesk.agents.assistant.models import Classification
from alphadesk.agents.task import AgentTask

__all__ = [
    "AnswerTask",
    "AssistantTask",
    "ClassifierTask",
    "IterateTask",
    "QuestionTask",
    "RouterTask",
    "ThinkerTask",
]


@dataclass(frozen=True, kw_only=True)
class AssistantTask(AgentTask):
    package = "alphadesk.agents.assistant"


@dataclass(frozen=True, kw_only=True)
class ClassifierTask(AssistantTask):
    template = "classifier"
    history: str  # the conversation so far, one "role: text" line per message
    question: str


@dataclass(frozen=True, kw_only=True)
class RouterTask(AssistantTask):
    template = "router"
    question: str
    classification: Classification

    def values(self) -> dict[str, str]:
        return {"question": self.question, "classification": _shown(self.classification)}


@dataclass(frozen=True, kw_only=True)
class QuestionTask(AssistantTask):
    """The answer writer's task: the question in its conversation, classified, with the
    instant the data is as of."""

    history: str
    question: str
    as_of: datetime
    as_of_note: str | None  # why the data is as of that instant, when it is not now
    classification: Classification

    def values(self) -> dict[str, str]:
        return super().values() | {
            "as_of": self.as_of.date().isoformat(),
            "as_of_note": f" {self.as_of_note}" if self.as_of_note else "",
            "classification": _shown(self.classification),
        }


@dataclass(frozen=True, kw_only=True)
class AnswerTask(QuestionTask):
    """Write the answer from the results of the calls the router planned."""

    template = "answer"
    results: list[dict[str, Any]]  # each with the tool, its arguments, ok, result or error


@dataclass(frozen=True, kw_only=True)
class IterateTask(QuestionTask):
    """Call the tools needed, a few at a time within ``turns`` turns; then answer."""

    template = "iterate"
    turns: int


@dataclass(frozen=True, kw_only=True)
class ThinkerTask(AssistantTask):
    template = "thinker"
    query: str
    context: str


def _shown(classification: Classification) -> str:
    return classification.model_dump_json(indent=1)

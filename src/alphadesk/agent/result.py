"""How a run ended: a closed set of typed outcomes, never a silent default."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from alphadesk.agent.usage import LimitExceeded
from alphadesk.llm.messages import Message, Usage

__all__ = [
    "Completed",
    "MaxTurnsReached",
    "ModelFailed",
    "NoValidOutput",
    "Outcome",
    "RunNotCompleted",
    "RunResult",
    "ToolCrashed",
    "ToolRetriesExhausted",
    "UsageLimitReached",
]

OutputT = TypeVar("OutputT")


@dataclass(frozen=True)
class Completed(Generic[OutputT]):
    """A valid output. ``forced_final``: given after the turn limit, from what the model had."""

    output: OutputT
    forced_final: bool = False
    kind: Literal["completed"] = "completed"

    @property
    def reason(self) -> str | None:
        return (
            "turn limit reached; answer given from the facts gathered"
            if self.forced_final
            else None
        )


@dataclass(frozen=True)
class NoValidOutput:
    """The model's answers never passed parsing and validation within the retry budget."""

    raw_text: str | None
    error: str
    kind: Literal["no_valid_output"] = "no_valid_output"

    @property
    def reason(self) -> str:
        return f"no valid output after retries: {self.error}"


@dataclass(frozen=True)
class MaxTurnsReached:
    """The turn limit was hit and the forced final answer was not valid either."""

    max_turns: int
    raw_text: str | None
    error: str
    kind: Literal["max_turns"] = "max_turns"

    @property
    def reason(self) -> str:
        return f"turn limit {self.max_turns} reached and the final answer was invalid: {self.error}"


@dataclass(frozen=True)
class UsageLimitReached:
    limit: LimitExceeded
    kind: Literal["usage_limit"] = "usage_limit"

    @property
    def reason(self) -> str:
        return str(self.limit)


@dataclass(frozen=True)
class ModelFailed:
    """The model could not answer (provider down, bad key, replay cache miss...)."""

    error_type: str
    error: str
    kind: Literal["model_failed"] = "model_failed"

    @property
    def reason(self) -> str:
        return f"{self.error_type}: {self.error}"


@dataclass(frozen=True)
class ToolCrashed:
    """A tool raised an unexpected exception it did not opt in to report to the model."""

    tool: str
    error: str
    kind: Literal["tool_crashed"] = "tool_crashed"

    @property
    def reason(self) -> str:
        return f"tool {self.tool} crashed: {self.error}"


@dataclass(frozen=True)
class ToolRetriesExhausted:
    """The model kept calling a tool wrongly (or an unknown tool) beyond its retry budget."""

    tool: str
    error: str
    kind: Literal["tool_retries"] = "tool_retries"

    @property
    def reason(self) -> str:
        return f"tool {self.tool}: too many invalid calls, last error: {self.error}"


Outcome = (
    Completed[Any]
    | NoValidOutput
    | MaxTurnsReached
    | UsageLimitReached
    | ModelFailed
    | ToolCrashed
    | ToolRetriesExhausted
)


class RunNotCompleted(RuntimeError):
    """Asked for the output of a run that did not complete."""

    def __init__(self, agent: str, outcome: Outcome) -> None:
        super().__init__(f"agent {agent!r} did not complete: {outcome.reason}")
        self.outcome = outcome


@dataclass(frozen=True)
class RunResult(Generic[OutputT]):
    """Everything about one agent run: outcome, conversation, usage."""

    run_id: str
    agent: str
    model: str
    outcome: Outcome
    messages: list[Message]
    usage: Usage
    tool_calls: int
    started_at: datetime
    finished_at: datetime

    @property
    def ok(self) -> bool:
        return isinstance(self.outcome, Completed)

    @property
    def output(self) -> OutputT:
        """The validated output; raises RunNotCompleted (with the reason) otherwise."""
        if isinstance(self.outcome, Completed):
            return self.outcome.output
        raise RunNotCompleted(self.agent, self.outcome)

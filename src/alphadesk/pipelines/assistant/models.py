"""The assistant pipeline's request, limits and result.

A question is recorded as it was answered: with its conversation so far and the instant it
was asked, so a replay of the run asks the very same question again.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    computed_field,
    model_validator,
)

from alphadesk.agents.assistant.models import Classification, RouterDecision
from alphadesk.llm.messages import Usage
from alphadesk.pipelines.models import PipelineResult
from alphadesk.store import ChatMessage
from alphadesk.store.redact import redact

__all__ = ["ChatLimits", "ChatRequest", "ChatResult", "NumberCheck", "ToolCallRecord"]


class ChatLimits(BaseModel):
    """The seed's safety limits, per question."""

    model_config = ConfigDict(frozen=True)

    max_iterations: int = Field(6, ge=1, le=20, description="Model turns of a tool loop.")
    max_tool_calls: int = Field(16, ge=1, le=100, description="Tool calls per question.")
    tool_timeout_s: float = Field(60.0, gt=0, description="One tool call.")
    request_timeout_s: float = Field(300.0, gt=0, description="The whole question.")


class ChatRequest(BaseModel):
    """One question in a session."""

    model_config = ConfigDict(frozen=True)

    # A key pasted into a question is gone before the pipeline reads it: nothing downstream
    # (prompts, events, stores, the stream) ever holds it.
    question: Annotated[str, AfterValidator(redact)] = Field(min_length=1, max_length=4_000)
    session_id: str | None = Field(None, description="None starts a new session.")
    as_of: AwareDatetime | None = Field(
        None, description="None: now, or the last date the data covers when it is offline."
    )
    limits: ChatLimits = Field(default_factory=ChatLimits)
    history: list[ChatMessage] | None = Field(
        None, description="The conversation before this question; None: the session's."
    )
    asked_at: AwareDatetime | None = Field(
        None, description="When it was asked: the 'now' of the question. None: now."
    )


class ToolCallRecord(BaseModel):
    """One tool call as the answer used it."""

    tool: str
    arguments: str
    ok: bool
    seconds: float | None = None
    error: str | None = None


class NumberCheck(BaseModel):
    """Every figure of the answer, traced to a tool result or flagged."""

    checked: int = Field(description="Figures found in the answer.")
    traced: int = Field(description="... of which a tool result (or the question) holds.")
    unverified: list[str] = Field(default_factory=list, description="The others, as written.")

    @property
    def ok(self) -> bool:
        return not self.unverified


class ChatResult(PipelineResult):
    """The answer to one question, and everything behind it.

    ``decision`` is how the question ended (``completed`` or ``error``, also given as
    ``status``); ``reason`` says why it ended in error (also given as ``error``); ``symbol``
    names the symbols the question was about, if any.
    """

    symbol: str = ""
    decision: Literal["completed", "error"]
    session_id: str
    run_id: str
    question: str
    answer: str
    as_of_note: str | None = None
    classification: Classification | None = None
    route: RouterDecision | None = None
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list, description="What it could not get.")
    numbers: NumberCheck = Field(default_factory=lambda: NumberCheck(checked=0, traced=0))
    models: dict[str, str] = Field(default_factory=dict, description="agent -> model.")
    usage: Usage = Field(default_factory=Usage)
    seconds: float = 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def status(self) -> Literal["completed", "error"]:
        return self.decision

    @computed_field  # type: ignore[prop-decorator]
    @property
    def error(self) -> str | None:
        return self.reason

    @model_validator(mode="before")
    @classmethod
    def _from_status(cls, data: Any) -> Any:
        """A result recorded with ``status`` and ``error`` only (before ``decision``)."""
        if isinstance(data, dict) and "decision" not in data and "status" in data:
            return {**data, "decision": data["status"], "reason": data.get("error")}
        return data

    def decided(self) -> dict[str, object]:
        """What the question decided: the answer and how it got there, without ids, timings
        and usage (a replay answers from the cache, in its own time)."""
        return self.model_dump(
            mode="json",
            exclude={"run_id": True, "agents": True, "seconds": True, "usage": True,
                     "tool_calls": {"__all__": {"seconds"}}},
        )  # fmt: skip

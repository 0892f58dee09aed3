"""Provider-neutral messages, requests and responses.

Every model adapter converts to and from these types, so the agent loop, the cache and
the run store never see a provider's wire format.
"""

from __future__ import annotations

import base64
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

__all__ = [
    "AssistantMessage",
    "ContentPart",
    "ImagePart",
    "Message",
    "ModelResponse",
    "RequestSettings",
    "SystemMessage",
    "TextPart",
    "ToolCall",
    "ToolMessage",
    "ToolSpec",
    "Usage",
    "UserMessage",
    "text_of",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextPart(_Frozen):
    type: Literal["text"] = "text"
    text: str


class ImagePart(_Frozen):
    """An image sent to a vision model (e.g. a rendered chart)."""

    type: Literal["image"] = "image"
    data: bytes
    media_type: str = "image/png"

    @field_serializer("data")
    def _b64(self, data: bytes) -> str:
        return base64.b64encode(data).decode("ascii")

    @field_validator("data", mode="before")
    @classmethod
    def _from_b64(cls, value: Any) -> Any:
        return base64.b64decode(value) if isinstance(value, str) else value

    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{base64.b64encode(self.data).decode('ascii')}"


ContentPart = Annotated[TextPart | ImagePart, Field(discriminator="type")]


class SystemMessage(_Frozen):
    role: Literal["system"] = "system"
    content: str


class UserMessage(_Frozen):
    """A user turn. ``task`` is the structured task ``content`` was rendered from, for a
    model that reads data rather than text (the ``rules`` policies); it is never sent to a
    provider nor serialized, so it leaves cache and journal keys as the text alone makes them.
    """

    role: Literal["user"] = "user"
    content: str | list[ContentPart]
    task: Any = Field(default=None, exclude=True, repr=False)


class ToolCall(_Frozen):
    """A tool call as the model sent it; ``arguments`` is the raw JSON text."""

    id: str
    name: str
    arguments: str = "{}"


class AssistantMessage(_Frozen):
    role: Literal["assistant"] = "assistant"
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)


class ToolMessage(_Frozen):
    """The result of one tool call, sent back to the model."""

    role: Literal["tool"] = "tool"
    tool_call_id: str
    name: str
    content: str | list[ContentPart]


Message = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")
]


def text_of(content: str | list[ContentPart] | None) -> str:
    """The text of a message body, images dropped."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(part.text for part in content if isinstance(part, TextPart))


class ToolSpec(_Frozen):
    """What a model is told about a tool: its name, purpose and JSON-schema parameters."""

    name: str
    description: str
    parameters: dict[str, Any]


class RequestSettings(_Frozen):
    """Per-request knobs. ``output_schema`` asks for native structured output when supported."""

    max_tokens: int | None = 4096
    temperature: float | None = None
    timeout_s: float | None = None
    output_schema: dict[str, Any] | None = None
    output_name: str = "final_answer"


class Usage(_Frozen):
    """Tokens and cost of one or more model calls."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            requests=self.requests + other.requests,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
        )


class ModelResponse(_Frozen):
    """One model answer: the assistant message plus who answered and what it cost."""

    message: AssistantMessage
    model: str
    usage: Usage = Field(default_factory=lambda: Usage(requests=1))
    finish_reason: str | None = None
    latency_s: float = 0.0
    cached: bool = False

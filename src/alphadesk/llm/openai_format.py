"""Our messages and tools in the OpenAI chat format that LiteLLM (and every
OpenAI-compatible server) takes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from alphadesk.llm.messages import (
    AssistantMessage,
    ContentPart,
    Message,
    SystemMessage,
    TextPart,
    ToolMessage,
    ToolSpec,
    UserMessage,
)

__all__ = ["to_openai_messages", "to_openai_tools"]


def _content(content: str | list[ContentPart], vision: bool) -> str | list[dict[str, Any]]:
    """Our content as OpenAI content: a string, or parts when an image is really sent."""
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, TextPart):
            parts.append({"type": "text", "text": part.text})
        elif vision:
            parts.append({"type": "image_url", "image_url": {"url": part.data_url()}})
        else:
            note = f"[image omitted ({part.media_type}, {len(part.data)} bytes): "
            parts.append({"type": "text", "text": note + "this model does not accept images]"})
    if all(p["type"] == "text" for p in parts):
        # Plain text is what every OpenAI-compatible server accepts, in every role.
        return "\n".join(p["text"] for p in parts)
    return parts


def _message(message: Message, vision: bool) -> dict[str, Any]:
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": message.content}
    if isinstance(message, UserMessage):
        return {"role": "user", "content": _content(message.content, vision)}
    if isinstance(message, AssistantMessage):
        out: dict[str, Any] = {"role": "assistant", "content": message.content}
        if message.tool_calls:
            out["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in message.tool_calls
            ]
        elif message.content is None:
            out["content"] = ""  # some providers reject an empty turn with null content
        return out
    if isinstance(message, ToolMessage):
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id,
            "name": message.name,  # Gemini needs it to pair results with calls
            "content": _content(message.content, vision),
        }
    raise TypeError(f"not a message: {message!r}")


def to_openai_messages(messages: Sequence[Message], *, vision: bool) -> list[dict[str, Any]]:
    """Our messages in the OpenAI chat format LiteLLM takes. Without ``vision``, images
    become a short text note so the model knows something was there."""
    return [_message(message, vision) for message in messages]


def to_openai_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    # ToolSpec's fields are exactly OpenAI's function fields: name, description, parameters.
    return [{"type": "function", "function": tool.model_dump(mode="json")} for tool in tools]

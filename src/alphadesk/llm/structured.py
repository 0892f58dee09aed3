"""When an answer's JSON schema goes to the server as ``response_format``.

Constrained decoding (llama.cpp, Ollama, vLLM and the hosted APIs all turn the schema into
a grammar) makes even a tiny model's answer parse. Two kinds of provider differ in what
happens when the turn also offers tools:

- *mixing* providers (OpenAI, Azure, Anthropic's native structured output...) keep tool
  calls available next to the schema, so the schema goes with every request;
- *local* OpenAI-compatible servers apply the schema to everything the model writes, so a
  tool call becomes impossible: the schema goes only with turns that offer no tools, and
  every request carries the schema in words (a stable system-prompt suffix, so the
  server's prompt cache keeps working) for the turns that do.

``response_format = "always"`` sends it with tools too (the model then cannot call them),
``"never"`` leaves answers to the fenced-JSON instructions of the agent loop.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from alphadesk.llm.messages import Message, RequestSettings, SystemMessage

__all__ = [
    "LOCAL_PROVIDERS",
    "ResponseFormatMode",
    "SchemaPlan",
    "response_format",
    "with_schema_instructions",
]

ResponseFormatMode = Literal["auto", "always", "never"]

# Providers that are OpenAI-compatible local or self-hosted servers.
LOCAL_PROVIDERS = frozenset(
    {"hosted_vllm", "vllm", "lm_studio", "llamafile", "ollama", "ollama_chat", "openai_like"}
    | {"custom_openai"}
)

SchemaPlan = Literal["native", "native_without_tools", "none"]


def response_format(settings: RequestSettings) -> dict[str, Any]:
    # OpenAI restricts schema names to [a-zA-Z0-9_-]{1,64}.
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", settings.output_name)[:64] or "output"
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": settings.output_schema, "strict": False},
    }


def with_schema_instructions(
    messages: Sequence[Message], settings: RequestSettings
) -> list[Message]:
    """``messages`` with the answer's schema described at the end of the system prompt."""
    note = (
        "When you have gathered what you need, stop calling tools and reply with only the "
        "final answer: one JSON object matching this JSON schema:\n"
        f"{json.dumps(settings.output_schema, separators=(',', ':'))}"
    )
    out = list(messages)
    for index, message in enumerate(out):
        if isinstance(message, SystemMessage):
            out[index] = SystemMessage(content=f"{message.content}\n\n{note}")
            return out
    return [SystemMessage(content=note), *out]

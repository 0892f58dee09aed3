"""Turning a model's final answer into a validated, typed output."""

from __future__ import annotations

import json
import re
from typing import Any, Literal, TypeVar, cast

from pydantic import BaseModel, ValidationError

from alphadesk.agent.errors import describe_invalid
from alphadesk.agent.schema import untitled

__all__ = [
    "AnswerMode",
    "OutputInvalid",
    "format_instructions",
    "output_schema",
    "parse_output",
    "retry_prompt",
]

AnswerMode = Literal["native", "fenced", "text"]
"""How a final answer is asked for: the provider's structured output, a ```json block in
the text (models without it), or free text (``str`` outputs)."""

_REPLY = {
    "native": "Reply again with only the corrected JSON object, matching the response format.",
    "fenced": "Reply again with the corrected final answer as one JSON object in a ```json block.",
    "text": "Reply again with a corrected final answer.",
}

OutputT = TypeVar("OutputT")

# By output type, shared by the process: a type's schema and instructions are fixed by it.
_SCHEMAS: dict[type[Any], dict[str, Any] | None] = {}
_INSTRUCTIONS: dict[type[Any], str | None] = {}
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


class OutputInvalid(ValueError):
    """The final answer could not be parsed or validated; the message is for the model."""


def output_schema(output_type: type[Any]) -> dict[str, Any] | None:
    """The JSON schema of a structured output type, or None for plain text.

    Built once per type (every turn of every run asks for it): treat it as read-only.
    """
    if output_type not in _SCHEMAS:
        is_model = isinstance(output_type, type) and issubclass(output_type, BaseModel)
        _SCHEMAS[output_type] = untitled(output_type.model_json_schema()) if is_model else None
    return _SCHEMAS[output_type]


def format_instructions(output_type: type[Any]) -> str | None:
    """What the system prompt says about the answer's format, for models without native
    structured output (written once per type: every run's system prompt shows it)."""
    if output_type not in _INSTRUCTIONS:
        _INSTRUCTIONS[output_type] = _instructions(output_schema(output_type))
    return _INSTRUCTIONS[output_type]


def _instructions(schema: dict[str, Any] | None) -> str | None:
    if schema is None:
        return None
    return (
        "When you have gathered what you need, give your final answer as a single JSON object "
        "in a ```json fenced block, matching this JSON schema exactly:\n"
        f"{json.dumps(schema, separators=(',', ':'))}"
    )


def parse_output(text: str | None, output_type: type[OutputT]) -> OutputT:
    """Parse ``text`` as ``output_type``: the whole text as JSON, else a fenced block, else the
    outermost ``{...}``. Raises OutputInvalid saying what to fix."""
    if not text or not text.strip():
        raise OutputInvalid("the answer was empty; reply with the final answer")
    if output_type is str:
        return cast(OutputT, text)
    model = cast(type[BaseModel], output_type)
    errors: list[str] = []
    for candidate in _json_candidates(text):
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        try:
            return cast(OutputT, model.model_validate(data))
        except ValidationError as exc:
            errors.append(describe_invalid(exc))
    if errors:
        raise OutputInvalid("the JSON answer does not match the schema:\n" + errors[0])
    raise OutputInvalid("the answer holds no JSON object")


def _json_candidates(text: str) -> list[str]:
    candidates = [text.strip(), *(m.strip() for m in _FENCE.findall(text))]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    return list(dict.fromkeys(candidates))


def retry_prompt(error: OutputInvalid, mode: AnswerMode) -> str:
    """What the model is told when its final answer is refused, phrased for how the answer
    is asked for (never a ```json block when the provider constrains the output)."""
    return f"Your final answer could not be accepted:\n{error}\n{_REPLY[mode]}"

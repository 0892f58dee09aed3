"""Exceptions of the agent engine."""

from __future__ import annotations

from pydantic import ValidationError

__all__ = ["ModelRetry", "ToolDefinitionError", "UnexpectedToolError", "describe_invalid"]


class ModelRetry(Exception):
    """Raised by a tool or an output validator: the message tells the model how to fix it.

    The message goes back to the model and the step is retried, within a budget.
    """


class ToolDefinitionError(TypeError):
    """A tool's signature or docstring cannot be turned into a schema the model can use."""


class UnexpectedToolError(RuntimeError):
    """A tool raised an exception it did not choose to report to the model."""

    def __init__(self, tool: str, error: BaseException) -> None:
        super().__init__(f"tool {tool!r} failed: {type(error).__name__}: {error}")
        self.tool = tool
        self.error = error


def describe_invalid(error: ValidationError | ValueError) -> str:
    """A compact, model-readable list of what was wrong with some JSON."""
    if not isinstance(error, ValidationError):
        return str(error)
    lines = []
    for item in error.errors(include_url=False):
        where = ".".join(str(p) for p in item["loc"]) or "(root)"
        lines.append(f"- {where}: {item['msg']}")
    return "\n".join(lines)

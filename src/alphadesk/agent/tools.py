"""Tools: typed ``async def`` functions whose schema comes from the signature and docstring.

    @tool
    async def get_quote(ctx: RunContext[Deps], symbol: str, fields: list[str] | None = None):
        '''Latest quote for a symbol as of the run's instant.

        Args:
            symbol: Ticker, e.g. "MSFT".
            fields: Which fields to return; all when omitted.
        '''

A missing type or argument description fails here, at registration, not in front of a model.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, get_origin, get_type_hints, overload

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, create_model

from alphadesk.agent.context import RunContext
from alphadesk.agent.errors import ToolDefinitionError
from alphadesk.agent.schema import untitled
from alphadesk.llm.messages import ContentPart, ImagePart, TextPart, ToolSpec

__all__ = ["Tool", "ToolReturn", "render_result", "tool"]

ToolFunction = Callable[..., Awaitable[Any]]


@dataclass(frozen=True)
class ToolReturn:
    """A tool result with images attached (e.g. a rendered chart for a vision model)."""

    value: Any
    images: list[ImagePart] = field(default_factory=list)


@dataclass(frozen=True)
class Tool:
    """A registered tool: its spec for the model, its argument validator and the function."""

    function: ToolFunction
    spec: ToolSpec
    arguments: type[BaseModel]
    takes_context: bool
    retries: int = 2
    report_errors: bool = False

    @property
    def name(self) -> str:
        return self.spec.name

    def validate(self, raw_arguments: str) -> dict[str, Any]:
        """Parse and validate the model's JSON arguments; raises ValidationError or ValueError."""
        try:
            data = json.loads(raw_arguments or "{}")
        except json.JSONDecodeError as exc:
            raise ValueError(f"arguments are not valid JSON ({exc.msg} at char {exc.pos})") from exc
        if not isinstance(data, dict):
            raise ValueError("arguments must be a JSON object")
        parsed = self.arguments.model_validate(data)
        # Keep validated values (coerced types, nested models) but only the fields given or
        # defaulted, as keyword arguments.
        return {name: getattr(parsed, name) for name in type(parsed).model_fields}

    async def call(self, ctx: RunContext[Any], kwargs: dict[str, Any]) -> Any:
        if self.takes_context:
            return await self.function(ctx, **kwargs)
        return await self.function(**kwargs)


def render_result(value: Any) -> str | list[ContentPart]:
    """What the model sees of a tool's return value: JSON text, plus images if any."""
    images: list[ImagePart] = []
    if isinstance(value, ToolReturn):
        images, value = value.images, value.value
    if isinstance(value, str):
        text = value
    elif isinstance(value, BaseModel):
        text = value.model_dump_json(exclude_none=True)
    else:
        text = json.dumps(value, default=str, ensure_ascii=False)
    if not images:
        return text
    return [TextPart(text=text), *images]


@overload
def tool(function: ToolFunction, /) -> Tool: ...


@overload
def tool(
    *, name: str | None = None, retries: int = 2, report_errors: bool = False
) -> Callable[[ToolFunction], Tool]: ...


def tool(
    function: ToolFunction | None = None,
    /,
    *,
    name: str | None = None,
    retries: int = 2,
    report_errors: bool = False,
) -> Tool | Callable[[ToolFunction], Tool]:
    """Register an ``async def`` as a tool.

    Args:
        function: The tool function (when used as a bare ``@tool``).
        name: The name the model sees; the function name by default.
        retries: How many invalid calls (bad arguments, ModelRetry) the model may make.
        report_errors: Send unexpected exceptions to the model instead of failing the run.
    """

    def register(fn: ToolFunction) -> Tool:
        return _build_tool(fn, name or fn.__name__, retries, report_errors)

    return register(function) if function is not None else register


def _build_tool(fn: ToolFunction, name: str, retries: int, report_errors: bool) -> Tool:
    where = f"tool {name!r} ({fn.__module__}.{fn.__qualname__})"
    if not inspect.iscoroutinefunction(fn):
        raise ToolDefinitionError(f"{where} must be an `async def` function")
    doc = docstring_parser.parse(inspect.getdoc(fn) or "")
    description = "\n\n".join(p for p in (doc.short_description, doc.long_description) if p)
    if not description:
        raise ToolDefinitionError(f"{where} needs a docstring saying what it does")
    param_docs = {p.arg_name: (p.description or "").strip() for p in doc.params}
    hints = get_type_hints(fn, include_extras=True)
    params = list(inspect.signature(fn).parameters.values())
    takes_context = bool(params) and _is_context(hints.get(params[0].name))
    fields: dict[str, Any] = {}
    for param in params[1:] if takes_context else params:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolDefinitionError(f"{where}: *args and **kwargs cannot be described to a model")
        if param.name not in hints:
            raise ToolDefinitionError(f"{where}: parameter {param.name!r} has no type annotation")
        if _is_context(hints[param.name]):
            raise ToolDefinitionError(f"{where}: RunContext must be the first parameter")
        if not param_docs.get(param.name):
            raise ToolDefinitionError(
                f"{where}: parameter {param.name!r} has no description in the docstring's Args"
            )
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (hints[param.name], Field(default, description=param_docs[param.name]))
    arguments = create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    spec = ToolSpec(
        name=name, description=description, parameters=untitled(arguments.model_json_schema())
    )
    return Tool(fn, spec, arguments, takes_context, retries, report_errors)


def _is_context(annotation: Any) -> bool:
    return annotation is RunContext or get_origin(annotation) is RunContext

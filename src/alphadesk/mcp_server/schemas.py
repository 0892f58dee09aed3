"""What an MCP client is told about a catalogue tool: its input schema (the tool's own,
plus ``as_of``) and, when it returns a model, its output schema. Both are read from the
tool itself, never written out again."""

from __future__ import annotations

import copy
import typing
from typing import Any

from mcp import types
from pydantic import BaseModel

from alphadesk.tools.catalog import CatalogEntry

__all__ = ["AS_OF", "MODEL", "MODEL_SCHEMA", "mcp_tool", "output_model"]

AS_OF = "as_of"
MODEL = "model"
MODEL_SCHEMA = {
    "type": "string",
    "description": "The model every agent of the desk runs with: a LiteLLM model string the "
    "server allows, or 'rules' (offline, deterministic). Default: the server's settings. "
    "Another model is refused.",
}
_AS_OF_SCHEMA = {
    "type": "string",
    "format": "date",
    "description": "The close to analyse at (YYYY-MM-DD); nothing known after it is used. "
    "Default: now, or the last close the data covers (said in the result).",
}


def output_model(entry: CatalogEntry) -> type[BaseModel] | None:
    """The pydantic model the tool returns, if its signature says it returns one."""
    try:
        returned = typing.get_type_hints(entry.tool.function).get("return")
    except (NameError, TypeError):  # an annotation that does not resolve: no schema
        return None
    if isinstance(returned, type) and issubclass(returned, BaseModel):
        return returned
    return None


def mcp_tool(entry: CatalogEntry) -> types.Tool:
    """The catalogue entry as an MCP tool."""
    inputs: dict[str, Any] = copy.deepcopy(entry.tool.spec.parameters)
    inputs.setdefault("type", "object")
    inputs.setdefault("properties", {})[AS_OF] = _AS_OF_SCHEMA
    if entry.toolset == "desks":
        inputs["properties"][MODEL] = MODEL_SCHEMA
    model = output_model(entry)
    return types.Tool(
        name=entry.name,
        title=f"{entry.toolset}/{entry.name}",
        description=entry.tool.spec.description,
        input_schema=inputs,
        output_schema=model.model_json_schema(mode="serialization") if model else None,
        annotations=types.ToolAnnotations(read_only_hint=entry.toolset != "desks"),
    )

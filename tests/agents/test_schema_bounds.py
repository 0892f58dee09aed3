"""Every agent's answer schema is bounded and every tool's argument schema is small.

A server that turns the answer's schema into constrained decoding (llama.cpp, Ollama,
vLLM, the hosted APIs) can only end an answer whose strings and lists have a ceiling; and
a tool that took arrays of bars or option rows as arguments would invite the model to
write them out, thousands of tokens at a time.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest
from pydantic import BaseModel, Field

from alphadesk.agent import Tool, tool
from alphadesk.agent.output import output_schema
from alphadesk.agents.algo import default_agents as algo_agents
from alphadesk.agents.assistant import ANSWER, CLASSIFIER, ROUTER, THINKER
from alphadesk.agents.csp import default_agents as csp_agents
from alphadesk.agents.desk import default_agents as desk_agents
from alphadesk.agents.fund import PORTFOLIO_MANAGER
from alphadesk.agents.spec import AgentSpec
from alphadesk.tools.catalog import toolsets

_FREE_FORMS = {"date", "date-time", "time"}  # their grammar has a fixed length
_MAX_TOOL_SCHEMA_CHARS = 2_500
_MAX_REFERENCE_FIELDS = 4  # a contract named by its terms; a bar or an option row has more


def every_spec() -> list[AgentSpec[Any, Any]]:
    csp = csp_agents()
    return [
        csp.chart,
        csp.options,
        csp.research,
        csp.narrator,
        *desk_agents().all,
        *algo_agents().all,
        PORTFOLIO_MANAGER,
        CLASSIFIER,
        ROUTER,
        ANSWER,
        THINKER,
    ]


def every_tool() -> dict[str, Tool]:
    tools = {t.name: t for toolset in toolsets() for t in toolset}
    tools |= {t.name: t for spec in every_spec() for t in spec.agent.toolset}
    return tools


def nodes(
    schema: dict[str, Any], defs: dict[str, Any], path: str
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every sub-schema with its path, references resolved (each definition once)."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        yield from nodes(defs[name], {k: v for k, v in defs.items() if k != name}, path)
        return
    yield path, schema
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key, []):
            yield from nodes(sub, defs, path)
    for name, sub in schema.get("properties", {}).items():
        yield from nodes(sub, defs, f"{path}.{name}")
    if isinstance(schema.get("items"), dict):
        yield from nodes(schema["items"], defs, f"{path}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from nodes(schema["additionalProperties"], defs, f"{path}{{}}")


def unbounded(schema: dict[str, Any]) -> list[str]:
    found = []
    for path, node in nodes(schema, schema.get("$defs", {}), "answer"):
        kind = node.get("type")
        bounded = {"maxLength", "enum", "const"} & node.keys() or node.get("format") in _FREE_FORMS
        if kind == "string" and not bounded:
            found.append(f"{path}: string without maxLength")
        if kind == "array" and "maxItems" not in node:
            found.append(f"{path}: array without maxItems")
        if isinstance(node.get("additionalProperties"), dict) and "maxProperties" not in node:
            found.append(f"{path}: map without maxProperties")
    return found


@pytest.mark.parametrize("spec", every_spec(), ids=lambda s: s.name)
def test_every_answer_schema_bounds_its_strings_lists_and_maps(spec: AgentSpec[Any, Any]) -> None:
    schema = output_schema(spec.agent.output_type)
    if schema is None:  # a free-text answer: max_tokens is its bound
        assert spec.agent.output_type is str
        return
    assert unbounded(schema) == []


def test_the_walker_finds_an_unbounded_field() -> None:
    class Loose(BaseModel):
        notes: str
        items: list[int] = Field(max_length=3)
        tags: list[str] = Field(max_length=3)

    assert unbounded(Loose.model_json_schema()) == [
        "answer.notes: string without maxLength",
        "answer.tags[]: string without maxLength",
    ]


@pytest.mark.parametrize("tool", list(every_tool().values()), ids=lambda t: t.name)
def test_no_tool_takes_rows_of_data_as_arguments(tool: Tool) -> None:
    schema = tool.spec.parameters
    assert len(json.dumps(schema)) <= _MAX_TOOL_SCHEMA_CHARS
    defs = schema.get("$defs", {})
    for path, node in nodes(schema, defs, tool.name):
        if node.get("type") != "array":
            continue
        items = node.get("items", {})
        if "$ref" in items:
            items = defs[items["$ref"].rsplit("/", 1)[-1]]
        if items.get("type") == "object":  # a small reference is fine, a row of data is not
            fields = items.get("properties", {})
            assert len(fields) <= _MAX_REFERENCE_FIELDS, f"{path}: rows of {sorted(fields)}"
            assert all(f.get("type") != "array" for f in fields.values()), path
        else:
            assert items.get("type") in {"string", "number", "integer"} or "enum" in items, path


class Bar(BaseModel):
    day: date
    open: float
    high: float
    low: float
    close: float


def test_the_tool_walker_refuses_rows_of_bars() -> None:
    @tool
    async def backtest(bars: list[Bar]) -> str:
        """Backtest bars.

        Args:
            bars: The bars.
        """
        return "ok"

    with pytest.raises(AssertionError, match="rows of"):
        test_no_tool_takes_rows_of_data_as_arguments(backtest)

"""Tool schemas derive from signatures and Google-style docstrings."""

from __future__ import annotations

import json
from datetime import date
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from alphadesk.agent import RunContext, ToolDefinitionError, tool


class Window(BaseModel):
    start: date
    end: date


@tool
async def lookup(
    ctx: RunContext[None],
    symbol: str,
    period: Literal["1mo", "6mo", "1y"] = "6mo",
    limit: int = 5,
    window: Window | None = None,
) -> dict[str, Any]:
    """Look something up.

    Longer explanation for the model.

    Args:
        symbol: Ticker to look up.
        period: How far back.
        limit: At most this many rows.
        window: Optional explicit date window.
    """
    return {"symbol": symbol}


def test_schema_from_signature_and_docstring() -> None:
    spec = lookup.spec
    assert spec.name == "lookup"
    assert spec.description == "Look something up.\n\nLonger explanation for the model."
    params = spec.parameters
    assert params["type"] == "object"
    assert params["required"] == ["symbol"]
    assert params["additionalProperties"] is False
    props = params["properties"]
    assert list(props) == ["symbol", "period", "limit", "window"]  # ctx is not exposed
    assert props["symbol"] == {
        "description": "Ticker to look up.",
        "type": "string",
    }
    assert props["period"]["enum"] == ["1mo", "6mo", "1y"]
    assert props["period"]["default"] == "6mo"
    assert props["limit"]["type"] == "integer"
    assert "Window" in json.dumps(params["$defs"])
    assert lookup.takes_context
    assert "title" not in json.dumps(params)  # pydantic's titles only repeat the names


def test_validation_coerces_and_rejects() -> None:
    assert lookup.validate('{"symbol": "MSFT"}') == {
        "symbol": "MSFT",
        "period": "6mo",
        "limit": 5,
        "window": None,
    }
    parsed = lookup.validate(
        '{"symbol": "X", "window": {"start": "2020-01-01", "end": "2020-02-01"}}'
    )
    assert parsed["window"] == Window(start=date(2020, 1, 1), end=date(2020, 2, 1))
    with pytest.raises(ValidationError, match="period"):
        lookup.validate('{"symbol": "X", "period": "2y"}')
    with pytest.raises(ValidationError, match="Extra inputs"):
        lookup.validate('{"symbol": "X", "bogus": 1}')
    with pytest.raises(ValueError, match="not valid JSON"):
        lookup.validate('{"symbol": ')
    with pytest.raises(ValueError, match="JSON object"):
        lookup.validate("[1, 2]")


def test_tool_without_context_and_custom_name() -> None:
    @tool(name="add_numbers", retries=4, report_errors=True)
    async def add(a: float, b: float) -> float:
        """Add two numbers.

        Args:
            a: First.
            b: Second.
        """
        return a + b

    assert add.name == "add_numbers"
    assert not add.takes_context
    assert add.retries == 4 and add.report_errors
    assert add.spec.parameters["required"] == ["a", "b"]


def test_missing_type_fails_at_registration() -> None:
    with pytest.raises(ToolDefinitionError, match="'x' has no type annotation"):

        @tool
        async def untyped(x) -> None:  # type: ignore[no-untyped-def]
            """Do it.

            Args:
                x: A thing.
            """


def test_missing_description_fails_at_registration() -> None:
    with pytest.raises(ToolDefinitionError, match="'y' has no description"):

        @tool
        async def half_documented(x: int, y: int) -> None:
            """Do it.

            Args:
                x: A thing.
            """

    with pytest.raises(ToolDefinitionError, match="needs a docstring"):

        @tool
        async def undocumented(x: int) -> None:
            pass


def test_sync_functions_and_misplaced_context_are_refused() -> None:
    with pytest.raises(ToolDefinitionError, match="async def"):

        @tool
        def sync(x: int) -> None:  # type: ignore[arg-type]
            """Do it.

            Args:
                x: A thing.
            """

    with pytest.raises(ToolDefinitionError, match="first parameter"):

        @tool
        async def late_context(x: int, ctx: RunContext[None]) -> None:
            """Do it.

            Args:
                x: A thing.
                ctx: The context.
            """


# Property: for any generated signature, the schema lists exactly the parameters, requires
# exactly those without defaults, and valid JSON arguments round-trip through validation.
_TYPES: dict[str, tuple[Any, st.SearchStrategy[Any]]] = {
    "int": (int, st.integers(-(10**6), 10**6)),
    "float": (float, st.floats(allow_nan=False, allow_infinity=False, width=32)),
    "str": (str, st.text(max_size=8)),
    "bool": (bool, st.booleans()),
    "list[int]": (list[int], st.lists(st.integers(-5, 5), max_size=3)),
}

_param = st.tuples(st.sampled_from(sorted(_TYPES)), st.booleans())


@settings(max_examples=60, deadline=None)
@given(st.lists(_param, min_size=0, max_size=5), st.data())
def test_schema_property(params: list[tuple[str, bool]], data: st.DataObject) -> None:
    names = [f"p{i}" for i in range(len(params))]
    # Parameters with defaults must come after those without, as in Python.
    params = sorted(params, key=lambda p: p[1])
    lines = "\n".join(f"        {n}: Parameter {n}." for n in names)
    sig = ", ".join(
        f"{n}: {kind}" + (" = None" if has_default else "")
        for n, (kind, has_default) in zip(names, params, strict=True)
    )
    source = f'async def generated({sig}):\n    """Generated.\n\n    Args:\n{lines}\n    """\n'
    namespace: dict[str, Any] = {}
    exec(source, namespace)  # building signatures is the point of this test
    built = tool(namespace["generated"])
    schema = built.spec.parameters
    assert list(schema.get("properties", {})) == names
    required = [n for n, (_, has_default) in zip(names, params, strict=True) if not has_default]
    assert schema.get("required", []) == required
    for n in names:
        assert schema["properties"][n]["description"] == f"Parameter {n}."
    values = {
        n: data.draw(_TYPES[kind][1])
        for n, (kind, has_default) in zip(names, params, strict=True)
        if not has_default
    }
    assert {k: v for k, v in built.validate(json.dumps(values)).items() if k in values} == values

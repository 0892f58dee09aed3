"""The MCP tool list is read from the catalogue: each tool's own schema plus ``as_of``."""

from __future__ import annotations

from alphadesk.mcp_server.schemas import mcp_tool, output_model
from alphadesk.tools.catalog import tool_catalog
from alphadesk.tools.chart.models import PriceHistory


def test_every_catalogue_tool_keeps_its_own_schema_and_gains_as_of() -> None:
    for entry in tool_catalog():
        listed = mcp_tool(entry)
        own = entry.tool.spec.parameters
        assert "as_of" not in own.get("properties", {}), "the tool's own schema is untouched"
        assert listed.input_schema["properties"]["as_of"]["format"] == "date"
        added = {"as_of", "model"}
        assert {k: v for k, v in listed.input_schema["properties"].items() if k not in added} == (
            own.get("properties", {})
        )
        assert listed.description == entry.tool.spec.description


DESKS = {"run_csp_desk", "run_trading_desk", "run_csp_screen"}


def test_only_the_desks_take_a_model() -> None:
    taking = {e.name for e in tool_catalog() if "model" in mcp_tool(e).input_schema["properties"]}
    assert taking == DESKS


def test_a_tool_that_returns_a_model_declares_its_output_schema() -> None:
    entry = tool_catalog().get("get_price_history")
    assert entry is not None
    assert output_model(entry) is PriceHistory
    schema = mcp_tool(entry).output_schema
    assert schema == PriceHistory.model_json_schema(mode="serialization")


def test_only_the_desks_are_marked_as_writing() -> None:
    writing = {
        e.name
        for e in tool_catalog()
        if (a := mcp_tool(e).annotations) is not None and not a.read_only_hint
    }
    assert writing == DESKS

"""The tool catalogue is built from the toolsets and lists every tool exactly once; the
``alphadesk tools`` command prints it."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from alphadesk.agent import Toolset
from alphadesk.cli.app import app
from alphadesk.tools.assistant import ASSISTANT_TOOLS, DESK_TOOLS
from alphadesk.tools.catalog import ToolCatalog, one_line, tool_catalog, toolsets
from alphadesk.tools.chart import CHART_TOOLS
from alphadesk.tools.market import FUNDAMENTALS_TOOLS, MARKET_TOOLS
from alphadesk.tools.options import OPTIONS_TOOLS, ZERO_DTE_TOOLS
from alphadesk.tools.research import RESEARCH_TOOLS
from alphadesk.tools.social import SOCIAL_TOOLS

ALL_SETS = (
    MARKET_TOOLS,
    CHART_TOOLS,
    OPTIONS_TOOLS,
    RESEARCH_TOOLS,
    FUNDAMENTALS_TOOLS,
    SOCIAL_TOOLS,
    ASSISTANT_TOOLS,
    ZERO_DTE_TOOLS,
    DESK_TOOLS,
)


def test_every_tool_of_every_toolset_exactly_once() -> None:
    catalog = tool_catalog()
    expected = [(s.name, t.name) for s in ALL_SETS for t in s]
    assert [(e.toolset, e.name) for e in catalog] == expected
    assert len(set(catalog.names)) == len(catalog) == sum(len(s) for s in ALL_SETS)
    assert set(catalog.toolset_names) == {
        "market",
        "chart",
        "options",
        "research",
        "fundamentals",
        "social",
        "assistant",
        "zero_dte",
        "desks",
    }
    assert {
        "get_option_chain",
        "get_news",
        "stock_screener",
        "get_fundamentals",
        "render_chart",
    } <= set(catalog.names)


def test_every_tool_says_what_it_can_and_cannot_do() -> None:
    for entry in tool_catalog():
        assert entry.capabilities and entry.limitations, entry.name
    text = tool_catalog().as_text(notes=True)
    assert "    can: a same-day SPY strangle" in text and "cannot: paper account only" in text


def test_entries_carry_the_tools_own_one_line_summary() -> None:
    for entry in tool_catalog():
        first = entry.tool.spec.description.splitlines()[0]
        assert entry.description == one_line(entry.tool.spec.description)
        assert entry.description and "\n" not in entry.description
        assert entry.description == first or entry.description.endswith("…")
        required = entry.tool.spec.parameters.get("required", [])
        assert list(entry.parameters[: len(required)]) == required
        assert set(entry.parameters) == set(entry.tool.spec.parameters["properties"])


def test_catalogue_follows_its_toolsets() -> None:
    first = Toolset.of("first", list(OPTIONS_TOOLS)[:2])
    extra = Toolset.of("extra", [RESEARCH_TOOLS.tools[0]])
    catalog = ToolCatalog((first, extra))
    assert catalog.names == [*first.names, *extra.names]
    assert catalog.select("get_news", "get_option_chain").names == ["get_option_chain", "get_news"]
    assert catalog.toolset("extra") is extra
    text = catalog.as_text().splitlines()
    assert len(text) == 3 and text[0].startswith("first/get_option_chain(symbol, dte_min")
    with pytest.raises(KeyError, match="no toolset 'nope'"):
        catalog.toolset("nope")
    with pytest.raises(KeyError, match="unknown tools"):
        catalog.select("get_weather")
    with pytest.raises(ValueError, match="in both the 'first' and 'again' toolsets"):
        ToolCatalog((first, Toolset.of("again", [OPTIONS_TOOLS.tools[0]])))


def test_one_line_shortens_long_summaries() -> None:
    long = "word " * 60
    short = one_line(long + "\n\nDetails.")
    assert len(short) <= 120 and short.endswith("…")
    assert one_line("Summary.\n\nDetails.") == "Summary."
    assert tool_catalog().toolset_names == [s.name for s in toolsets()]


def test_cli_lists_every_tool() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["tools"], env={"COLUMNS": "220"})
    assert result.exit_code == 0, result.output
    for entry in tool_catalog():
        assert entry.name in result.output
        assert entry.description[:40] in result.output
    only = runner.invoke(app, ["tools", "--toolset", "research"], env={"COLUMNS": "220"})
    assert only.exit_code == 0 and "get_news" in only.output
    assert "get_option_chain" not in only.output
    bad = runner.invoke(app, ["tools", "--toolset", "nope"])
    assert bad.exit_code == 1


def test_cli_shows_one_tool_with_its_schema() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["tools", "show", "filter_options"], env={"COLUMNS": "220"})
    assert result.exit_code == 0, result.output
    assert "options/filter_options" in result.output and '"delta_max"' in result.output
    assert runner.invoke(app, ["tools", "show", "nope"]).exit_code == 1


@pytest.mark.slow
def test_help_does_not_import_the_tools() -> None:
    code = (
        "import sys; import alphadesk.cli.app; "
        "print(any(m.startswith('alphadesk.tools.') and m != 'alphadesk.tools.deps' "
        "for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

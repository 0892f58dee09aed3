"""``alphadesk tools``: the tools agents can call, one row per tool."""

from __future__ import annotations

import json

import typer

from alphadesk.cli.common import console, fail

__all__ = ["tools_app"]

tools_app = typer.Typer(
    help="The tools agents can call: toolset, name and what each does.",
    invoke_without_command=True,
)


@tools_app.callback()
def list_tools(
    ctx: typer.Context,
    toolset: str | None = typer.Option(None, "--toolset", "-t", help="Only this toolset."),
) -> None:
    """List every tool (toolset, name, description)."""
    if ctx.invoked_subcommand is not None:
        return
    from alphadesk.cli.tables import Column, FitTable
    from alphadesk.tools.catalog import tool_catalog

    catalog = tool_catalog()
    if toolset is not None and toolset not in catalog.toolset_names:
        raise fail(f"no toolset {toolset!r}", f"choose from {', '.join(catalog.toolset_names)}")
    table = FitTable("toolset", "name", Column("description", text=True), title="alphadesk tools")
    for entry in catalog:
        if toolset is None or entry.toolset == toolset:
            table.add_row(entry.toolset, entry.name, entry.description)
    console.print(table)


@tools_app.command("show")
def show_tool(
    name: str = typer.Argument(..., metavar="TOOL", help="A tool name from `alphadesk tools`."),
) -> None:
    """Show one tool: its full description and the JSON schema of its arguments."""
    from alphadesk.tools.catalog import tool_catalog

    entry = tool_catalog().get(name)
    if entry is None:
        raise fail(f"no tool {name!r}", "run `alphadesk tools` to list them")
    console.print(f"[bold]{entry.toolset}/{entry.name}[/]\n")
    # Reflow the docstring's hard-wrapped paragraphs to the terminal's width.
    paragraphs = [" ".join(p.split()) for p in entry.tool.spec.description.split("\n\n")]
    console.print("\n\n".join(paragraphs), markup=False, highlight=False)
    console.print()
    console.print_json(json.dumps(entry.tool.spec.parameters))

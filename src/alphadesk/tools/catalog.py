"""Every tool an agent can be given, with its one-line description and toolset.

Built from the toolsets themselves (never a hand-kept copy), so a new tool appears here
the moment it joins a toolset; what each tool can and cannot do comes from
:mod:`.catalog_notes`. The assistant's router reads :meth:`ToolCatalog.as_text` (with
``notes=True``) to choose tools for a question; ``alphadesk tools`` prints the same list.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass

from alphadesk.agent import Tool, Toolset
from alphadesk.tools.catalog_notes import TOOL_NOTES

__all__ = ["CatalogEntry", "ToolCatalog", "one_line", "tool_catalog", "toolsets"]

_MAX_LINE = 120


def one_line(description: str) -> str:
    """The first line of a tool description (its summary), shortened to fit a table row."""
    first = description.strip().splitlines()[0].strip() if description.strip() else ""
    if len(first) <= _MAX_LINE:
        return first
    return first[: _MAX_LINE - 1].rsplit(" ", 1)[0] + "…"


@dataclass(frozen=True)
class CatalogEntry:
    """One tool as the catalogue lists it.

    Attributes:
        name: The name the model calls it by.
        toolset: The toolset it belongs to.
        description: Its one-line summary.
        parameters: Its argument names, required ones first.
        tool: The tool itself.
        capabilities: What it can do, in a line ("" when not described).
        limitations: What it cannot do, in a line.
    """

    name: str
    toolset: str
    description: str
    parameters: tuple[str, ...]
    tool: Tool
    capabilities: str = ""
    limitations: str = ""


def _parameters(item: Tool) -> tuple[str, ...]:
    schema = item.spec.parameters
    names = list(schema.get("properties", {}))
    required = [n for n in names if n in schema.get("required", [])]
    return tuple(required + [n for n in names if n not in required])


class ToolCatalog:
    """The tools of several toolsets; a name may appear in only one of them."""

    def __init__(self, sets: tuple[Toolset, ...]) -> None:
        self._sets = sets
        entries: list[CatalogEntry] = []
        owner: dict[str, str] = {}
        for toolset in sets:
            for item in toolset:
                if item.name in owner:
                    raise ValueError(
                        f"tool {item.name!r} is in both the {owner[item.name]!r} and "
                        f"{toolset.name!r} toolsets; a tool name must be unique"
                    )
                owner[item.name] = toolset.name
                can, cannot = TOOL_NOTES.get(item.name, ("", ""))
                entries.append(
                    CatalogEntry(
                        item.name,
                        toolset.name,
                        one_line(item.spec.description),
                        _parameters(item),
                        item,
                        can,
                        cannot,
                    )
                )
        self._entries = tuple(entries)

    def __iter__(self) -> Iterator[CatalogEntry]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def names(self) -> list[str]:
        return [e.name for e in self._entries]

    @property
    def toolset_names(self) -> list[str]:
        return [s.name for s in self._sets]

    def get(self, name: str) -> CatalogEntry | None:
        return next((e for e in self._entries if e.name == name), None)

    def toolset(self, name: str) -> Toolset:
        """One toolset by name; an unknown name is an error that lists the known ones."""
        for toolset in self._sets:
            if toolset.name == name:
                return toolset
        raise KeyError(f"no toolset {name!r}; the toolsets are {self.toolset_names}")

    def select(self, *names: str) -> Toolset:
        """The named tools, from whichever toolsets hold them (e.g. a router's choice)."""
        unknown = [n for n in names if self.get(n) is None]
        if unknown:
            raise KeyError(f"unknown tools {unknown}; the catalogue has {self.names}")
        return Toolset("selected", tuple(e.tool for e in self._entries if e.name in names))

    def as_text(self, *, notes: bool = False) -> str:
        """One line per tool, ``toolset/name(arguments): description``, for a prompt;
        with ``notes``, each followed by its capabilities and limitations."""
        lines = []
        for e in self._entries:
            lines.append(f"{e.toolset}/{e.name}({', '.join(e.parameters)}): {e.description}")
            if notes and (e.capabilities or e.limitations):
                lines.append(f"    can: {e.capabilities}; cannot: {e.limitations}")
        return "\n".join(lines)


def toolsets() -> tuple[Toolset, ...]:
    """Every toolset, in catalogue order: the market tools, then the assistant's own, the
    0DTE engine and the desks."""
    from alphadesk.tools.assistant import ASSISTANT_TOOLS, DESK_TOOLS
    from alphadesk.tools.chart import CHART_TOOLS
    from alphadesk.tools.market import FUNDAMENTALS_TOOLS, MARKET_TOOLS
    from alphadesk.tools.options import OPTIONS_TOOLS, ZERO_DTE_TOOLS
    from alphadesk.tools.research import RESEARCH_TOOLS
    from alphadesk.tools.social import SOCIAL_TOOLS

    return (
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


@functools.cache
def tool_catalog() -> ToolCatalog:
    """The catalogue of every toolset (built once per process)."""
    return ToolCatalog(toolsets())

"""Reports (Markdown) printed so their tables fit the terminal: every Markdown table is a
``FitTable``, so decisions, costs and model names stay whole and long text wraps."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import Markdown, MarkdownElement, TableElement

from alphadesk.cli.tables import Column, FitTable

__all__ = ["Report"]

_TEXT_WORDS = 4  # a column with a cell of this many words holds free text: it may wrap


class _FitTableElement(TableElement):
    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        header = self.header.row.cells if self.header and self.header.row else []
        rows = [[cell.content for cell in row.cells] for row in self.body.rows] if self.body else []
        columns = []
        for i, cell in enumerate(header):
            below = [row[i].plain for row in rows if i < len(row)]
            text = any(len(value.split()) >= _TEXT_WORDS for value in below)
            columns.append(Column(cell.content.plain, text=text, right=cell.justify == "right"))
        table = FitTable(*columns)
        for row in rows:
            table.add_row(*row[: len(columns)], *[""] * (len(columns) - len(row)))
        yield table


class Report(Markdown):
    """``rich.markdown.Markdown`` whose tables fit the width they are printed at."""

    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements,
        "table_open": _FitTableElement,
    }

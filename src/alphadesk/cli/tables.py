"""Tables that fit the terminal: the values a user needs are never cut, free text wraps.

A column holds either values (ids, dates, symbols, decisions, numbers, costs: printed whole
on one line) or free text (reasons, titles, names: wrapped at words). When the terminal is
too narrow for every column, free text moves to an indented line under its row, then, from
the right, the values least needed: everything stays readable and whole at any width.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, JustifyMethod, RenderResult
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

__all__ = ["Cell", "Column", "FitTable"]

Cell = str | Text  # a str is plain text (never markup: a reason may hold brackets)

_GAP = 2  # spaces between columns
_TEXT_MIN = 24  # the narrowest a free-text column may get before it moves under its row
_INDENT = 4  # of the lines under a row


@dataclass(frozen=True)
class Column:
    """A column: its header, whether it holds free text, and how numbers align."""

    header: str
    text: bool = False  # free text wraps at words; a value is never wrapped or cut
    right: bool = False  # numbers align right


class FitTable:
    """Rows under a header, laid out for the console's width when printed."""

    def __init__(self, *columns: str | Column, title: str | None = None) -> None:
        self.columns = [c if isinstance(c, Column) else Column(c) for c in columns]
        self.title = title
        self.rows: list[tuple[list[Text], bool]] = []
        self._widths: list[int] = []  # each column's whole width, measured when printed

    def add_row(self, *cells: Cell, end_section: bool = False) -> None:
        """A row, a cell per column; ``end_section`` leaves a blank line after it."""
        if len(cells) != len(self.columns):
            raise ValueError(f"{len(cells)} cells for {len(self.columns)} columns")
        texts = [c if isinstance(c, Text) else Text(c) for c in cells]
        self.rows.append((texts, end_section))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        self._widths = [self._value_width(i) for i in range(len(self.columns))]
        inline = self._inline(width)
        moved = [i for i in range(len(self.columns)) if i not in inline]
        if self.title:
            yield Text(self.title, style="bold")
        header = [Text(self.columns[i].header, style="bold") for i in inline]
        yield self._grid(inline, header, wrap=True)  # a header may take two lines
        wraps = any(self.columns[i].text for i in inline)  # free text takes the rest
        yield Text("─" * (width if wraps else min(width, self._width(inline))), style="dim")
        for cells, end_section in self.rows:
            yield self._grid(inline, [cells[i] for i in inline])
            under = self._under(cells, moved)
            if under.plain:
                yield Padding(under, (0, 0, 0, _INDENT))
            if end_section:
                yield Text()

    def _value_width(self, index: int) -> int:
        values = [row[index].plain for row, _ in self.rows]
        widest = max((cell_len(line) for text in values for line in text.split("\n")), default=0)
        words = (cell_len(word) for word in self.columns[index].header.split())
        return max([widest, *words])  # a header wraps at its spaces: only its words count

    def _least_width(self, index: int) -> int:
        whole = self._widths[index]
        return min(whole, _TEXT_MIN) if self.columns[index].text else whole

    def _width(self, inline: list[int]) -> int:
        return sum(self._least_width(i) for i in inline) + _GAP * (len(inline) - 1)

    def _inline(self, width: int) -> list[int]:
        """The columns shown side by side: all that fit; free text leaves first, then the
        values from the right (the first column, what a row is about, always stays)."""
        inline = list(range(len(self.columns)))
        order = [i for i in reversed(inline) if self.columns[i].text]
        order += [i for i in reversed(inline[1:]) if not self.columns[i].text]
        for index in order:
            if self._width(inline) <= width:
                break
            inline.remove(index)
        return inline

    def _grid(self, inline: list[int], cells: list[Text], *, wrap: bool = False) -> Table:
        grid = Table.grid(padding=(0, _GAP, 0, 0), expand=any(self.columns[i].text for i in inline))
        for i in inline:
            column = self.columns[i]
            justify: JustifyMethod = "right" if column.right else "left"
            if column.text:
                grid.add_column(ratio=1, min_width=self._least_width(i), overflow="fold")
            else:
                grid.add_column(width=self._widths[i], no_wrap=not wrap, justify=justify)
        grid.add_row(*cells)
        return grid

    def _under(self, cells: list[Text], moved: list[int]) -> Text:
        """The moved columns of a row, each as ``header: value``, wrapped at words."""
        line = Text(overflow="fold")
        for i in moved:
            if cells[i].plain in ("", "-"):
                continue  # nothing to say
            if line.plain:
                line.append("  ·  ")
            line.append(f"{self.columns[i].header}: ", style="dim")
            line.append_text(cells[i])
        return line

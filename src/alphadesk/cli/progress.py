"""A progress bar for long commands (screens, evaluations): items done of the total and a
line of counts, on stderr, gone when the work is done."""

from __future__ import annotations

from typing import Self

from alphadesk.cli.common import err_console

__all__ = ["CountingBar"]


class CountingBar:
    """Use as a context manager; ``advance`` once per item with the counts to show."""

    def __init__(self, label: str, total: int | None = None, *, enabled: bool = True) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._bar = Progress(
            TextColumn(label),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.description}"),
            console=err_console,
            disable=not enabled,
            transient=True,
        )
        self._task = self._bar.add_task("", total=total)

    def __enter__(self) -> Self:
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()

    def set_total(self, total: int) -> None:
        self._bar.update(self._task, total=total)

    def advance(self, counts: str) -> None:
        self._bar.update(self._task, advance=1, description=counts)

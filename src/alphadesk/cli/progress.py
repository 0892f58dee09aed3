"""Progress of long commands (screens, evaluations): items done of the total and a line of
counts on stderr. On a terminal, a bar that is gone when the work is done; otherwise (a log,
a pipe, CI) a plain line for the first item, every few seconds, and the last."""

from __future__ import annotations

import time
from typing import Self

from alphadesk.cli.common import err_console

__all__ = ["CountingBar"]

PLAIN_EVERY_S = 5.0  # between plain progress lines


class CountingBar:
    """Use as a context manager; ``advance`` once per item with what to show beside it."""

    def __init__(self, label: str, total: int | None = None) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._label, self._total, self._done = label, total, 0
        self._plain = not err_console.is_terminal
        self._last_line = 0.0
        self._bar = Progress(
            TextColumn(label),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.description}"),
            console=err_console,
            disable=self._plain,
            transient=True,
        )
        self._task = self._bar.add_task("", total=total)

    def __enter__(self) -> Self:
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()

    def set_total(self, total: int) -> None:
        self._total = total
        self._bar.update(self._task, total=total)

    def advance(self, counts: str) -> None:
        self._done += 1
        self._bar.update(self._task, advance=1, description=counts)
        now = time.monotonic()
        due = self._done in (1, self._total) or now - self._last_line >= PLAIN_EVERY_S
        if self._plain and due:
            self._last_line = now
            of = f"/{self._total}" if self._total else ""
            err_console.print(
                f"{self._label} {self._done}{of}: {counts}", highlight=False, soft_wrap=True
            )

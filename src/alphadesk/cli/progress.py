"""Progress of long commands (screens, evaluations): items done of the total, the rate, the
time left, and a line of counts on stderr. On a terminal, a bar that is gone when the work
is done; otherwise (a log, a pipe, CI) a plain line for the first item, every few seconds,
and the last. Items done before (a resumed evaluation's) count as done, not in the rate."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Self

from alphadesk.cli.common import err_console

if TYPE_CHECKING:
    from alphadesk.pipelines.evaluation.models import DecisionRecord

__all__ = ["CountingBar"]

PLAIN_EVERY_S = 5.0  # between plain progress lines


class CountingBar:
    """Use as a context manager; ``advance`` once per item with what to show beside it."""

    def __init__(self, label: str, total: int | None = None) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._label, self._total, self._done = label, total, 0
        self._plain = not err_console.is_terminal
        self._last_line = 0.0
        self._started, self._skipped = time.monotonic(), 0
        self._bar = Progress(
            TextColumn(label),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[pace]}"),
            TextColumn("{task.description}"),
            console=err_console,
            disable=self._plain,
            transient=True,
        )
        self._task = self._bar.add_task("", total=total, pace="")

    def __enter__(self) -> Self:
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()

    def set_total(self, total: int) -> None:
        self._total = total
        self._started = time.monotonic()
        self._bar.update(self._task, total=total)

    def skip(self, done: int) -> None:
        """Count ``done`` items as done already (not in the rate), and say so."""
        self._done += done
        self._skipped += done
        self._started = time.monotonic()
        self._bar.update(self._task, completed=self._done)
        of = f" of {self._total}" if self._total else ""
        err_console.print(
            f"[dim]{self._label}: {done}{of} recorded before, continuing[/]", highlight=False
        )

    def pace(self) -> str:
        """The rate of the items done here and the time left at that rate."""
        now_done, seconds = self._done - self._skipped, time.monotonic() - self._started
        if now_done <= 0 or seconds <= 0:
            return ""
        rate = now_done / seconds
        if not self._total:
            return f"{rate:.2f}/s"
        left = (self._total - self._done) / rate
        return f"{rate:.2f}/s · ETA {_clock(left)}"

    def advance(self, counts: str) -> None:
        self._done += 1
        pace = self.pace()
        self._bar.update(self._task, advance=1, description=counts, pace=pace)
        now = time.monotonic()
        due = self._done in (1, self._total) or now - self._last_line >= PLAIN_EVERY_S
        if self._plain and due:
            self._last_line = now
            of = f"/{self._total}" if self._total else ""
            err_console.print(
                f"{self._label} {self._done}{of} · {pace}: {counts}",
                highlight=False,
                soft_wrap=True,
            )


def _clock(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


class DecisionBar(CountingBar):
    """An evaluation's bar of decisions: the latest symbol and date, how many failed."""

    def __init__(self) -> None:
        super().__init__("deciding")
        self.failed = 0

    def start(self, total: int) -> None:
        self.set_total(total)

    def record(self, record: DecisionRecord) -> None:
        self.failed += record.decision == "failed"
        self.advance(f"{record.symbol} {record.as_of.date()} · failed {self.failed}")

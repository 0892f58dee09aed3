"""How many runs a server takes at once: one more is refused at once, never queued."""

from __future__ import annotations

from alphadesk.pool.heap import trim_heap
from alphadesk.serving.errors import Refusal

__all__ = ["RunSlots", "RunsBusy", "Slot"]


class RunsBusy(Refusal):
    """Every run slot is taken (429)."""


class Slot:
    """One claimed run slot; released once, however many times ``release`` is called."""

    def __init__(self, slots: RunSlots) -> None:
        self._slots: RunSlots | None = slots

    def release(self) -> None:
        if self._slots is not None:
            self._slots.release()
            self._slots = None


class RunSlots:
    """At most ``limit`` runs at once; ``setting`` says where the limit is set."""

    def __init__(self, limit: int, setting: str = "max_runs") -> None:
        self.limit, self.active, self.setting = limit, 0, setting

    def claim(self) -> Slot:
        """A slot for one run.

        Raises:
            RunsBusy: ``limit`` runs are in progress.
        """
        if self.active >= self.limit:
            are = "run is" if self.active == 1 else "runs are"
            raise RunsBusy(
                429, "too_many_runs",
                f"{self.active} {are} in progress, the server's limit is {self.limit} "
                f"({self.setting})",
                "retry when one has finished",
            )  # fmt: skip
        self.active += 1
        return Slot(self)

    def release(self) -> None:
        self.active -= 1
        if self.active == 0:  # the server is idle: give the runs' freed heap back
            trim_heap()

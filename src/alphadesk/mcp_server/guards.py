"""What a client may make the MCP server do (``[mcp]`` in the settings): which models a
run tool's call may name, how many such calls run at once (the serving layer's allow-list
and run slots) and for how long. Each of their runs also keeps the settings' ``[limits]``
(requests, tokens, cost, wall time), as under the HTTP API."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from alphadesk.config import Settings
from alphadesk.serving.allowed import AllowedModels
from alphadesk.serving.slots import RunSlots

__all__ = ["CallError", "Guards"]


class CallError(Exception):
    """A call the client can fix: the message says what was wrong and what to do."""


@dataclass
class Guards:
    """The server's limits on its clients' calls."""

    settings: Settings
    models: AllowedModels = field(init=False)
    slots: RunSlots = field(init=False)

    def __post_init__(self) -> None:
        self.models = AllowedModels(self.settings, self.settings.mcp.models)
        self.slots = RunSlots(self.settings.mcp.max_runs, "[mcp] max_runs")

    def model(self, name: object) -> str | None:
        """The model a call asked for, if the server allows it; None: the settings'.

        Raises:
            ModelNotAllowed: the server does not allow it.
        """
        return self.models.check(name)

    @asynccontextmanager
    async def run_call(self) -> AsyncIterator[None]:
        """One call of a run tool: refused at once (RunsBusy) when ``max_runs`` are running,
        cancelled past ``call_timeout_s`` (a run it had begun is recorded interrupted; one
        stopped before its worker began it leaves no record)."""
        limit = self.settings.mcp.call_timeout_s
        slot = self.slots.claim()
        try:
            async with asyncio.timeout(limit):
                yield
        except TimeoutError:
            raise CallError(
                f"the call ran past the server's limit of {limit:g} s ([mcp] call_timeout_s) "
                "and was stopped; a run it had begun is recorded interrupted"
            ) from None
        finally:
            slot.release()

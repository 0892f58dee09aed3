"""What a client may make the server do (``[mcp]`` in the settings): which models a desk
call may name, how many desk calls run at once and for how long. Each desk run also keeps
the settings' ``[limits]`` (requests, tokens, cost, wall time), as under the HTTP API."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from alphadesk.config import RULES_MODEL, Settings

__all__ = ["CallError", "Guards"]


class CallError(Exception):
    """A call the client can fix: the message says what was wrong and what to do."""


@dataclass
class Guards:
    """The server's limits on its clients' calls."""

    settings: Settings
    active: int = field(default=0, init=False)

    def allowed_models(self) -> list[str]:
        """``rules``, the configured models and the ones ``[mcp] models`` adds."""
        configured = {self.settings.models.quick, self.settings.models.deep}
        return sorted({RULES_MODEL} | configured | set(self.settings.mcp.models))

    def model(self, name: object) -> str | None:
        """The model a call asked for, if the server allows it; None: the settings'."""
        if name is None:
            return None
        if isinstance(name, str) and name in self.allowed_models():
            return name
        raise CallError(
            f"model {str(name)[:80]!r} is not allowed on this server; use one of "
            f"{', '.join(self.allowed_models())}, or start the server with --allow-model"
        )

    @asynccontextmanager
    async def desk_call(self) -> AsyncIterator[None]:
        """One desk call: refused at once when ``max_runs`` are running, cancelled past
        ``call_timeout_s`` (a run it had begun is recorded interrupted; one stopped before
        its worker began it leaves no record)."""
        limits = self.settings.mcp
        if self.active >= limits.max_runs:
            raise CallError(
                f"{self.active} desk calls are running, the server's limit is "
                f"{limits.max_runs}; retry when one has finished"
            )
        self.active += 1
        try:
            async with asyncio.timeout(limits.call_timeout_s):
                yield
        except TimeoutError:
            raise CallError(
                f"the call ran past the server's limit of {limits.call_timeout_s:g} s "
                "([mcp] call_timeout_s) and was stopped; a run it had begun is recorded interrupted"
            ) from None
        finally:
            self.active -= 1

"""Which models a client may ask a server to run with: ``rules``, the configured models and
the ones the server's owner allowed (a public server must not spend its owner's money on
any model a client names)."""

from __future__ import annotations

from collections.abc import Iterable

from alphadesk.config import RULES_MODEL, Settings
from alphadesk.serving.errors import Refusal

__all__ = ["AllowedModels", "ModelNotAllowed"]


class ModelNotAllowed(Refusal):
    """A model the server does not allow (422)."""


class AllowedModels:
    """The allow-list of one server: ``rules``, the settings' models and ``extra``."""

    def __init__(self, settings: Settings, extra: Iterable[str]) -> None:
        configured = {settings.models.quick, settings.models.deep}
        self.names: list[str] = sorted({RULES_MODEL} | configured | set(extra))

    def check(self, name: object) -> str | None:
        """The model a request asked for, if allowed; None (the settings') stays None.

        Raises:
            ModelNotAllowed: ``name`` is not on the list.
        """
        if name is None:
            return None
        if isinstance(name, str) and name in self.names:
            return name
        raise ModelNotAllowed(
            422, "model_not_allowed", f"model {str(name)[:80]!r} is not allowed on this server",
            f"use one of {', '.join(self.names)}, or start the server with --allow-model",
        )  # fmt: skip

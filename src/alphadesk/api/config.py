"""How the HTTP server guards itself: where it listens, its key, and its limits."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

__all__ = ["ApiConfig", "ApiKeyRequired", "is_loopback"]


class ApiKeyRequired(RuntimeError):
    """The server would listen beyond this machine without a key."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve anywhere


@dataclass(frozen=True)
class ApiConfig:
    """The server's own limits (the pipelines' limits live in the settings).

    Attributes:
        host: The address the server binds; anything but loopback needs ``api_key``.
        api_key: Required in ``X-API-Key`` or ``Authorization: Bearer`` when set.
        max_body_bytes: Larger request bodies get 413.
        rate_per_minute: Requests per client address per minute; more get 429.
        max_runs: Pipeline runs (and chats) at the same time; one more gets 429.
        models: Model strings a request may ask for, besides ``rules`` and the settings'.
        temporal: A Temporal server's address: desk runs go to its workers as durable
            workflows (they outlive this server) instead of running in this process.
        workers: Worker processes that run the pipelines, off the server's event loop;
            None runs them in the server's own process (as the tests and embedders do).
        worker_max_runs: Runs a worker process takes before a fresh one replaces it.
    """

    host: str = "127.0.0.1"
    api_key: str | None = None
    max_body_bytes: int = 64 * 1024
    rate_per_minute: int = 120
    max_runs: int = 8
    models: frozenset[str] = field(default_factory=frozenset)
    temporal: str | None = None
    workers: int | None = None
    worker_max_runs: int = 200

    def check(self) -> None:
        """Refuse a configuration that would expose the server without a key.

        Raises:
            ApiKeyRequired: bound off loopback and no key.
            ValueError: fewer than 1 worker, or a worker retired before its first run.
        """
        if not is_loopback(self.host) and not self.api_key:
            raise ApiKeyRequired(
                f"refusing to listen on {self.host} without an API key: set ALPHADESK_API_KEY "
                "(or api_key in the settings file), or bind to 127.0.0.1"
            )
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers must be at least 1, not {self.workers}")
        if self.worker_max_runs < 1:
            raise ValueError(f"worker_max_runs must be at least 1, not {self.worker_max_runs}")

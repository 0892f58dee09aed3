"""How a server (the HTTP API, the MCP server over HTTP) guards itself: where it listens,
its key, which proxies it believes, and its limits."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

__all__ = ["MIN_KEY_LENGTH", "ApiKeyRequired", "ServerConfig", "is_loopback"]

MIN_KEY_LENGTH = 16  # a shorter key is found by trying: 16 characters of hex are 64 bits


class ApiKeyRequired(RuntimeError):
    """The server would listen beyond this machine without a key, or with a key too short
    to keep anyone out."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve anywhere


@dataclass(frozen=True)
class ServerConfig:
    """A server's own limits (the pipelines' limits live in the settings).

    Attributes:
        host: The address the server binds; anything but loopback needs ``api_key``.
        api_key: Required in ``X-API-Key`` or ``Authorization: Bearer`` when set; at least
            16 characters.
        max_body_bytes: Larger request bodies get 413.
        rate_per_minute: Requests per client address per minute; more get 429.
        max_runs: Pipeline runs (and chats) at the same time; one more gets 429.
        models: Model strings a request may ask for, besides ``rules`` and the settings'.
        temporal: A Temporal server's address: desk runs go to its workers as durable
            workflows (they outlive this server) instead of running in this process.
        workers: Worker processes that run the pipelines, off the server's event loop;
            None runs them in the server's own process (as the tests and embedders do).
        worker_max_runs: Runs a worker process takes before a fresh one replaces it.
        proxies: Addresses of the reverse proxies in front of the server (``*`` for any):
            only a connection from one of them may name its client in ``X-Forwarded-For``.
            None by default: the header is ignored, the client is the connection's peer
            (a header anyone can write must not choose the rate limit's bucket).
        header_timeout_s: Seconds a connection has to send a request's headers (from when
            it opens, or from the end of the previous response); then it is closed (408).
        max_connections: Open connections at once; one more is answered 503 and closed.
        max_connections_per_client: Open connections from one address (a proxy's excepted);
            one more is answered 503 and closed, so one client cannot take every socket.
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
    proxies: tuple[str, ...] = ()
    header_timeout_s: float = 10.0
    max_connections: int = 256
    max_connections_per_client: int = 32

    def check(self) -> None:
        """Refuse a configuration that would expose the server, or that cannot run.

        Raises:
            ApiKeyRequired: bound off loopback and no key, or a key under 16 characters.
            ValueError: fewer than 1 worker, a worker retired before its first run, or a
                header timeout or connection cap that is not positive.
        """
        if self.api_key and len(self.api_key) < MIN_KEY_LENGTH:
            raise ApiKeyRequired(
                f"the API key is {len(self.api_key)} characters long, it must be at least "
                f"{MIN_KEY_LENGTH}: set ALPHADESK_API_KEY (or api_key in the settings file) "
                "to a longer random key"
            )
        if not is_loopback(self.host) and not self.api_key:
            raise ApiKeyRequired(
                f"refusing to listen on {self.host} without an API key: set ALPHADESK_API_KEY "
                "(or api_key in the settings file), or bind to 127.0.0.1"
            )
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers must be at least 1, not {self.workers}")
        if self.worker_max_runs < 1:
            raise ValueError(f"worker_max_runs must be at least 1, not {self.worker_max_runs}")
        if (
            not self.header_timeout_s > 0
            or self.max_connections < 1
            or self.max_connections_per_client < 1
        ):
            raise ValueError(
                f"header_timeout_s ({self.header_timeout_s}), max_connections "
                f"({self.max_connections}) and max_connections_per_client "
                f"({self.max_connections_per_client}) must be positive"
            )

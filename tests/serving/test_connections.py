"""Connections that never become requests, on a real server: headers that never end are
cut at the header timeout (408), an idle connection is closed, one connection over the cap
is answered 503 at once; requests that do arrive are not disturbed."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from alphadesk.serving import ServerConfig
from tests.api.conftest import api_settings
from tests.support.live_api import LiveApi

TIMEOUT_S = 0.5  # the server's header timeout in these tests
MARGIN_S = 20.0  # what a busy machine may add before the server acts (a generous bound)
HEALTH = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
PARTIAL = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveApi]:
    config = ServerConfig(rate_per_minute=1_000_000, header_timeout_s=TIMEOUT_S, max_connections=4)
    with LiveApi(api_settings(tmp_path_factory.mktemp("connections")), config) as server:
        yield server


def _connect(live: LiveApi) -> socket.socket:
    port = int(live.url.rsplit(":", 1)[1])
    return socket.create_connection(("127.0.0.1", port), timeout=MARGIN_S)


def _answer(sock: socket.socket) -> bytes:
    """All the server sends until it closes the connection."""
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    return answer


def _error(answer: bytes) -> dict[str, str]:
    return dict(json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"])


def test_headers_that_never_end_are_cut_at_the_timeout(live: LiveApi) -> None:
    with _connect(live) as slow:
        slow.sendall(PARTIAL)
        started = time.monotonic()
        answer = _answer(slow)
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert _error(answer)["type"] == "header_timeout"
    assert "within 0.5 s" in _error(answer)["message"]
    assert TIMEOUT_S * 0.8 <= time.monotonic() - started < TIMEOUT_S + MARGIN_S


def test_a_trickle_of_header_bytes_does_not_extend_the_time(live: LiveApi) -> None:
    """The timeout counts from the connection's start, not from its last byte."""
    with _connect(live) as slow:
        slow.sendall(PARTIAL)
        slow.settimeout(0.1)
        started, answer = time.monotonic(), b""
        while time.monotonic() - started < TIMEOUT_S + MARGIN_S:
            try:
                slow.sendall(b"x")  # a byte every tenth of a second
                answer = slow.recv(65536)
                break  # the server answered, then closes
            except TimeoutError:
                continue
            except OSError:  # reset: the server closed it as the byte came
                break
        elapsed = time.monotonic() - started
    assert TIMEOUT_S * 0.8 <= elapsed < TIMEOUT_S + MARGIN_S
    assert answer == b"" or answer.startswith(b"HTTP/1.1 408 "), answer[:200]


def test_a_connection_that_sends_nothing_is_closed_unanswered(live: LiveApi) -> None:
    with _connect(live) as idle:
        assert _answer(idle) == b""  # closed, as keep-alive closes an idle connection


def test_one_connection_over_the_cap_is_answered_503_and_the_rest_go_on(live: LiveApi) -> None:
    held = [_connect(live) for _ in range(4)]
    try:
        for sock in held:
            sock.sendall(PARTIAL)
        with _connect(live) as extra:
            answer = _answer(extra)
        assert answer.startswith(b"HTTP/1.1 503 "), answer[:200]
        assert _error(answer)["type"] == "too_many_connections"
        assert "limit of 4 connections" in _error(answer)["message"]
    finally:
        for sock in held:
            sock.close()
    deadline = time.monotonic() + MARGIN_S
    while True:  # the server sees the closes: a connection is free again
        try:
            with httpx.Client(base_url=live.url, timeout=MARGIN_S) as c:
                assert c.get("/health").status_code == 200
            break
        except (httpx.RemoteProtocolError, AssertionError):
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_requests_on_a_kept_connection_and_a_slow_body_are_not_cut(live: LiveApi) -> None:
    with httpx.Client(base_url=live.url, timeout=MARGIN_S) as c:
        for _ in range(3):
            assert c.get("/health").status_code == 200
            time.sleep(TIMEOUT_S / 3)  # the next request within the timeout: kept
    body = b'{"symbol": 1}'
    head = (b"POST /csp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\nConnection: close\r\n\r\n") % len(body)  # fmt: skip
    with _connect(live) as sock:
        sock.sendall(head)  # the headers have ended: from here the server waits
        for byte in body:
            time.sleep(2 * TIMEOUT_S / len(body))  # the body over twice the timeout
            sock.sendall(bytes([byte]))
        answer = _answer(sock)
    assert answer.startswith(b"HTTP/1.1 422 "), answer[:200]
    assert _error(answer)["type"] == "validation_error"


def _connect_from(live: LiveApi, address: str) -> socket.socket:
    port = int(live.url.rsplit(":", 1)[1])
    return socket.create_connection(("127.0.0.1", port), timeout=MARGIN_S,
                                    source_address=(address, 0))  # fmt: skip


@pytest.mark.parametrize(("proxies", "refused"), [((), True), (("127.0.0.1",), False)])
def test_one_address_holds_at_most_its_share_of_connections(
    tmp_path: Path, proxies: tuple[str, ...], refused: bool
) -> None:
    """Two of eight from one address; another address is still served, and a proxy
    (which carries many clients) is not held to it."""
    config = ServerConfig(rate_per_minute=1_000_000, header_timeout_s=MARGIN_S, max_connections=8,
                          max_connections_per_client=2, proxies=proxies)  # fmt: skip
    with LiveApi(api_settings(tmp_path), config) as live:
        held = [_connect_from(live, "127.0.0.1") for _ in range(2)]
        try:
            for sock in held:
                sock.sendall(PARTIAL)
            with _connect_from(live, "127.0.0.1") as third:
                if not refused:  # a refused one is answered and closed before it sends
                    third.sendall(HEALTH)
                answer = _answer(third)
            with _connect_from(live, "127.0.0.2") as other:
                other.sendall(HEALTH)
                assert _answer(other).startswith(b"HTTP/1.1 200 ")
        finally:
            for sock in held:
                sock.close()
    if refused:
        assert answer.startswith(b"HTTP/1.1 503 "), answer[:200]
        assert "this client has its limit of 2 connections" in _error(answer)["message"]
    else:
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]


def test_a_zero_timeout_or_cap_is_refused(tmp_path: Path) -> None:
    for config in (ServerConfig(header_timeout_s=0), ServerConfig(max_connections=0),
                   ServerConfig(max_connections_per_client=0)):  # fmt: skip
        with pytest.raises(ValueError, match="must be positive"):
            config.check()

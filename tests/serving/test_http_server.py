"""The servers' HTTP server as ``alphadesk serve`` runs it: whom it believes a client is,
which keys it takes, and its documentation pages without the internet."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from alphadesk.api import create_app
from alphadesk.serving import ApiKeyRequired, ServerConfig
from alphadesk.serving.access import ACCESS_LOGGER
from tests.api.conftest import api_settings
from tests.support.live_api import LiveApi

FORGED = [f"203.0.113.{n}" for n in range(1, 8)]  # TEST-NET-3: nobody's address


def _clients(caplog: pytest.LogCaptureFixture, count: int) -> list[str]:
    """The client host of each access-log line, once ``count`` are written."""
    deadline = time.monotonic() + 10  # a line is written when its response has ended
    while time.monotonic() < deadline:
        records = [r for r in caplog.records if r.name == ACCESS_LOGGER]
        if len(records) >= count:
            return [str(r.client).rsplit(":", 1)[0] for r in records]  # type: ignore[attr-defined]
        time.sleep(0.02)
    raise AssertionError(f"fewer than {count} access-log lines")


def test_x_forwarded_for_is_not_believed_by_default(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A local process (or a page's request it relays) cannot choose its rate-limit bucket
    or the client the log records by writing the header."""
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    with LiveApi(api_settings(tmp_path), ServerConfig(rate_per_minute=5)) as live:
        with live.client() as c:
            statuses = [
                c.get("/health", headers={"X-Forwarded-For": forged}).status_code
                for forged in FORGED
            ]
        clients = _clients(caplog, len(FORGED))
    assert statuses == [200] * 5 + [429] * 2  # one bucket: the connection's peer
    assert set(clients) == {"127.0.0.1"}


def test_a_configured_proxy_names_the_client(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    config = ServerConfig(rate_per_minute=5, proxies=("127.0.0.1",))
    with LiveApi(api_settings(tmp_path), config) as live, live.client() as c:
        statuses = [
            c.get("/health", headers={"X-Forwarded-For": f"198.51.100.9, {forged}"}).status_code
            for forged in FORGED
        ]
        clients = _clients(caplog, len(FORGED))
    assert statuses == [200] * len(FORGED)  # a bucket per client the proxy names
    assert clients == FORGED  # the nearest address the proxy saw, not what the client wrote


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
@pytest.mark.parametrize("key", ["x", "k" * 15])
def test_a_key_under_16_characters_is_refused_on_any_address(
    tmp_path: Path, host: str, key: str
) -> None:
    with pytest.raises(ApiKeyRequired) as refused:
        create_app(api_settings(tmp_path), ServerConfig(host=host, api_key=key))
    said = str(refused.value)
    assert f"is {len(key)} characters long, it must be at least 16" in said
    assert "ALPHADESK_API_KEY" in said and key not in said.split(":")[0]
    create_app(api_settings(tmp_path), ServerConfig(host=host, api_key="k" * 16))


@pytest.mark.slow
@pytest.mark.parametrize("command", [["serve"], ["mcp", "--transport", "http"]])
def test_both_servers_refuse_a_short_key_before_listening(
    tmp_path: Path, command: list[str]
) -> None:
    env = {**os.environ, "ALPHADESK_DATA_DIR": str(tmp_path), "ALPHADESK_API_KEY": "abc",
           "PYTHONPATH": os.pathsep.join(sys.path)}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "alphadesk", *command, "--port", "1"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert "the API key is 3 characters long, it must be at least 16" in done.stderr


@pytest.mark.slow
def test_the_mcp_server_over_http_has_the_same_connection_guard(tmp_path: Path) -> None:
    """``alphadesk mcp --transport http`` runs on the same HTTP server: ``[server]
    header_timeout_s`` cuts headers that never end there too."""
    from tests.mcp_server.client import free_port, http_server

    port = free_port()
    with (
        http_server(tmp_path, port, ALPHADESK_SERVER__HEADER_TIMEOUT_S="0.5"),
        socket.create_connection(("127.0.0.1", port), timeout=30) as slow,
    ):
        slow.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        answer = b""
        while chunk := slow.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert b"within 0.5 s" in answer

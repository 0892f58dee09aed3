"""The server's guard on a real server: the key off loopback, the rate limit, the cap on
concurrent runs."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from alphadesk.api import create_app
from alphadesk.serving import ApiKeyRequired, ServerConfig
from tests.api.conftest import DAY, api_settings, run_count, slow_market
from tests.support.live_api import LiveApi, parse_sse

KEY = "k3y-for-tests-only-0123456789abcdef"


def test_off_loopback_without_a_key_the_app_refuses_to_start(tmp_path: Path) -> None:
    with pytest.raises(ApiKeyRequired, match="ALPHADESK_API_KEY"):
        create_app(api_settings(tmp_path), ServerConfig(host="0.0.0.0"))
    create_app(api_settings(tmp_path), ServerConfig(host="::1"))  # loopback: no key needed


@pytest.mark.slow
def test_the_serve_command_refuses_too(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "ALPHADESK_API_KEY"}
    env |= {"ALPHADESK_DATA_DIR": str(tmp_path), "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-m", "alphadesk", "serve", "--host", "0.0.0.0", "--port", "1"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0 without an API key" in done.stderr


@pytest.mark.slow
def test_off_loopback_with_a_key_only_the_key_gets_in(tmp_path: Path) -> None:
    config = ServerConfig(host="0.0.0.0", api_key=KEY, rate_per_minute=1000)
    with LiveApi(api_settings(tmp_path), config) as live:
        with live.client(key=None) as anonymous:
            for path in ("/health", "/runs", "/openapi.json"):
                response = anonymous.get(path)
                assert response.status_code == 401, path
                assert response.json()["error"]["type"] == "unauthorized"
            blocked = anonymous.post("/analyze", json={"symbol": "NVDA", "as_of": DAY})
            assert blocked.status_code == 401
        for headers in ({"X-API-Key": KEY[:-1] + "X"}, {"Authorization": f"Bearer {KEY}x"},
                        {"Authorization": f"Basic {KEY}"}, {"X-API-Key": ""}):  # fmt: skip
            with live.client(key=None, headers=headers) as wrong:
                assert wrong.get("/health").status_code == 401, headers
        with live.client(key=None, headers={"Authorization": f"Bearer {KEY}"}) as bearer:
            assert bearer.get("/health").json()["auth"] is True
        with live.client() as keyed:  # X-API-Key
            assert keyed.get("/runs").status_code == 200


def test_the_rate_limit_answers_429_with_retry_after(tmp_path: Path) -> None:
    with (
        LiveApi(api_settings(tmp_path), ServerConfig(rate_per_minute=5)) as live,
        live.client() as c,
    ):
        statuses = [c.get("/health").status_code for _ in range(7)]
        assert statuses == [200] * 5 + [429] * 2
        refused = c.get("/health")
        assert refused.json()["error"]["type"] == "rate_limited"
        assert int(refused.headers["retry-after"]) >= 1


@pytest.mark.slow
def test_one_run_too_many_is_429_and_the_slot_comes_back(tmp_path: Path) -> None:
    settings = api_settings(tmp_path)
    config = ServerConfig(max_runs=1, rate_per_minute=1000)
    body = {"symbol": "NVDA", "as_of": DAY, "analysts": ["market"]}
    with LiveApi(settings, config, market=slow_market(settings, 0.2)) as live, live.client() as c:
        with c.stream("POST", "/analyze/stream", json=body) as first:
            assert first.status_code == 200
            lines = first.iter_lines()
            next(e for e in parse_sse(lines) if e.event != "accepted")  # the run is under way
            others = {"/analyze": body, "/csp": {"symbol": "NVDA", "as_of": DAY},
                      "/chat/v3": {"question": "NVDA?"}}  # fmt: skip
            for path, extra in others.items():
                second = c.post(path, json=extra)
                assert second.status_code == 429, path
                error = second.json()["error"]
                assert error["type"] == "too_many_runs" and "limit is 1" in error["message"]
            assert c.get("/health").json()["runs_active"] == 1
            rest = list(parse_sse(lines))
        assert rest[-1].event == "result"
        assert c.get("/health").json()["runs_active"] == 0
        assert c.post("/csp", json={"symbol": "NVDA", "as_of": DAY}).status_code == 200


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.0.0.1:8000", "localhost", "LocalHost:1", "[::1]", "[::1]:8000"]
)
def test_a_keyless_server_answers_loopback_host_names(api: LiveApi, host: str) -> None:
    with api.client(headers={"Host": host}) as c:
        assert c.get("/health").status_code == 200


@pytest.mark.parametrize(
    "host",
    ["evil.example", "evil.example:8000", "127.0.0.1.evil.example", "localhost.evil.example",
     "127.0.0.2", "0.0.0.0:8000", "[::1]evil", "localhost:http", "::1", ""],
)  # fmt: skip
def test_a_keyless_server_refuses_other_host_names(api: LiveApi, host: str) -> None:
    """A web page whose domain resolves to 127.0.0.1 (DNS rebinding) still sends its own
    domain as Host: it gets nothing, whatever the route."""
    before = run_count(api.settings)
    with api.client(headers={"Host": host}) as c:
        for response in (c.get("/health"), c.get("/runs"),
                         c.post("/csp", json={"symbol": "NVDA", "as_of": DAY})):  # fmt: skip
            assert response.status_code == 421, (host, response.text)
            error = response.json()["error"]
            assert error["type"] == "host_not_allowed"
            assert "localhost, 127.0.0.1 or [::1]" in error["message"]
            assert "API key" in error["hint"]
    assert run_count(api.settings) == before


def test_a_request_without_host_is_refused(api: LiveApi) -> None:
    port = int(api.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        raw.sendall(b"GET /health HTTP/1.0\r\n\r\n")  # HTTP/1.0 may leave Host out
        answer = b""
        while chunk := raw.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 421 "), answer[:200]
    assert b"the Host header was missing" in answer


@pytest.mark.slow
def test_with_a_key_any_host_name_gets_in_with_the_key(tmp_path: Path) -> None:
    config = ServerConfig(host="0.0.0.0", api_key=KEY, rate_per_minute=1000)
    with LiveApi(api_settings(tmp_path), config) as live:
        with live.client(headers={"Host": "alphadesk.internal:8000"}) as keyed:
            assert keyed.get("/health").status_code == 200
        with live.client(key=None, headers={"Host": "alphadesk.internal:8000"}) as anonymous:
            assert anonymous.get("/health").status_code == 401

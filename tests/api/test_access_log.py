"""The access log: one line per request, with what an operator needs and no secret."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from alphadesk.serving.access import ACCESS_LOGGER
from tests.support.live_api import LiveApi

KEY = "sk-proj-" + "AccessLogKey0123" * 3
BEARER = "eyJhbGciOiJIUzI1NiJ9.access-log-bearer"
QUERY_SECRET = "q5ecret-value-987654"


def _records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == ACCESS_LOGGER]


def test_every_request_is_logged_with_status_duration_and_client(
    api: LiveApi, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    with api.client() as c:
        assert c.get("/health").status_code == 200
        assert c.get("/runs/nope").status_code == 404
        assert c.delete("/health").status_code == 405
    with api.client(headers={"Host": "evil.example"}) as c:
        assert c.get("/health").status_code == 421  # refused by the guard: logged too
    # The line is written when the response has ended. Margin: 60 s, for a busy machine.
    deadline = time.monotonic() + 60
    while len(_records(caplog)) < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    seen = [(r.method, r.path, r.status) for r in _records(caplog)]  # type: ignore[attr-defined]
    assert seen == [("GET", "/health", 200), ("GET", "/runs/nope", 404),
                    ("DELETE", "/health", 405), ("GET", "/health", 421)]  # fmt: skip
    first = _records(caplog)[0]
    assert first.client.startswith("127.0.0.1:")  # type: ignore[attr-defined]
    assert 0 <= first.duration_ms < 10_000  # type: ignore[attr-defined]
    assert first.levelno == logging.INFO
    message = first.getMessage()
    assert message.startswith(f"{first.client} GET /health 200 ")  # type: ignore[attr-defined]
    assert message.endswith(" ms")


def test_the_access_log_holds_no_secret(api: LiveApi, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    headers = {"X-API-Key": KEY, "Authorization": f"Bearer {BEARER}"}
    with api.client(headers=headers) as c:
        params = {"kind": "desk", "api_key": QUERY_SECRET, "token": KEY, "limit": "3"}
        assert c.get("/runs", params=params).status_code == 200
        assert c.get(f"/runs/{KEY}").status_code == 404  # a key pasted as an id
        assert c.get(f"/runs/{'x' * 10_000}").status_code == 404
    deadline = time.monotonic() + 60  # margin: as above
    while len(_records(caplog)) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    lines = [r.getMessage() for r in _records(caplog)]
    assert len(lines) == 3
    text = "\n".join(lines) + caplog.text
    for secret in (KEY, BEARER, QUERY_SECRET):
        assert secret not in text
    assert "/runs?kind=desk&api_key=[REDACTED]&token=[REDACTED]&limit=3" in lines[0]
    assert "/runs/[REDACTED] 404" in lines[1]
    assert len(lines[2]) < 400  # a 10,000-character path is cut


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_alphadesk_serve_prints_the_access_log(tmp_path: Path) -> None:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "ALPHADESK_API_KEY"}
    env |= {"ALPHADESK_DATA_DIR": str(tmp_path), "PYTHONPATH": os.pathsep.join(sys.path)}
    server = subprocess.Popen(
        [sys.executable, "-m", "alphadesk", "serve", "--port", str(port)],
        env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        base, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 90
        while True:
            assert server.poll() is None and time.monotonic() < deadline, "no server"
            try:
                httpx.get(f"{base}/runs", params={"token": QUERY_SECRET}, timeout=2)
                break
            except httpx.TransportError:
                time.sleep(0.2)
    finally:
        server.terminate()
        _, stderr = server.communicate(timeout=30)
    line = next(line for line in stderr.splitlines() if "alphadesk.api.access" in line)
    assert " INFO alphadesk.api.access: 127.0.0.1:" in line
    assert " GET /runs?token=[REDACTED] 200 " in line
    assert QUERY_SECRET not in stderr

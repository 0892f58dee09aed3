"""A bounded slow-header probe (slowloris) on a real server: three times its connection
cap of clients each trickle a request's headers and never end them. The server holds at
most its cap, answers the rest 503 at once, cuts every held one at the header timeout,
and serves a well-behaved client as soon as the attack has been cut."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from alphadesk.serving import ServerConfig
from tests.api.conftest import api_settings
from tests.support.live_api import LiveApi

pytestmark = pytest.mark.slow

CAP, TIMEOUT_S, ATTACKERS = 20, 1.0, 60
MARGIN_S = 30.0  # what a busy machine may add before the server acts (a generous bound)


def _attacker(port: int, outcomes: list[str], stop: threading.Event) -> None:
    """Trickle header bytes until the server answers or closes; say how it ended."""
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=MARGIN_S)
    except OSError:
        outcomes.append("not connected")
        return
    with sock:
        sock.settimeout(0.2)
        try:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            while not stop.is_set():
                try:
                    answer = sock.recv(65536)
                except TimeoutError:
                    sock.sendall(b"X-A: b\r\n")  # one more header line, never the end
                    continue
                outcomes.append(answer[:12].decode("latin-1") if answer else "closed")
                return
            outcomes.append("still open")
        except OSError:
            outcomes.append("reset")


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveApi]:
    config = ServerConfig(rate_per_minute=1_000_000, header_timeout_s=TIMEOUT_S,
                          max_connections=CAP)  # fmt: skip
    with LiveApi(api_settings(tmp_path), config) as server:
        yield server


def test_slow_headers_are_capped_and_cut(live: LiveApi) -> None:
    port = int(live.url.rsplit(":", 1)[1])
    outcomes: list[str] = []
    stop = threading.Event()
    attackers = [threading.Thread(target=_attacker, args=(port, outcomes, stop))
                 for _ in range(ATTACKERS)]  # fmt: skip
    started = time.monotonic()
    most = 0
    for thread in attackers:
        thread.start()
    while (
        any(t.is_alive() for t in attackers) and time.monotonic() - started < TIMEOUT_S + MARGIN_S
    ):
        most = max(most, len(live.server.server_state.connections))
        time.sleep(0.01)
    stop.set()
    for thread in attackers:
        thread.join(timeout=5)
    elapsed = time.monotonic() - started
    with httpx.Client(base_url=live.url, timeout=MARGIN_S) as client:
        served = client.get("/health").status_code
    refused = sum(o.startswith("HTTP/1.1 503") for o in outcomes)
    cut = sum(o.startswith("HTTP/1.1 408") for o in outcomes)
    print(f"{ATTACKERS} slow clients, cap {CAP}, timeout {TIMEOUT_S:g} s: {cut} cut (408), "
          f"{refused} refused (503), {len(outcomes) - cut - refused} otherwise, "
          f"at most {most} open, all ended in {elapsed:.1f} s")  # fmt: skip
    assert len(outcomes) == ATTACKERS and "still open" not in outcomes
    assert most <= CAP + 1  # a refused one is counted for the instant it is answered
    assert cut >= 1 and refused >= 1
    assert cut + refused + outcomes.count("reset") + outcomes.count("closed") == ATTACKERS
    assert elapsed < TIMEOUT_S + MARGIN_S
    assert served == 200
    assert len(live.server.server_state.connections) <= 1  # the attack left nothing behind

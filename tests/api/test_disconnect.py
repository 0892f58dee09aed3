"""A client that goes away cancels its run: the pipeline task is cancelled, the run is
recorded as interrupted (never left running), and its slot is free again."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from alphadesk.store import RunStore
from tests.api.conftest import DAY, api_settings, slow_market, wait_finished
from tests.support.live_api import LiveApi, parse_sse


@pytest.fixture(scope="module")
def slow_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveApi]:
    settings = api_settings(tmp_path_factory.mktemp("slow"))
    with LiveApi(settings, market=slow_market(settings, 0.3)) as live:
        yield live


def _wait_idle(client: httpx.Client) -> None:
    # Margin: the slot frees within a second when idle; 120 s covers a busy machine.
    deadline = time.monotonic() + 120
    while client.get("/health").json()["runs_active"]:
        assert time.monotonic() < deadline, "the run slot was not released"
        time.sleep(0.05)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/analyze/stream", {"symbol": "NVDA", "as_of": DAY}),
        ("/csp/stream", {"symbol": "NVDA", "as_of": DAY}),
        ("/chat/v3", {"question": "how does NVDA look?", "as_of": DAY}),
    ],
)
def test_closing_the_stream_cancels_the_run(
    slow_api: LiveApi, path: str, body: dict[str, object]
) -> None:
    with slow_api.client() as client:
        with client.stream("POST", path, json=body) as response:
            events = parse_sse(response.iter_lines())
            first = next(e for e in events if e.event != "accepted")  # the run has started
        # the connection is closed here, long before the slowed run could finish
        run_id = first.json()["run_id"]
        run = wait_finished(slow_api.settings, run_id)
        assert run.status == "interrupted"
        assert "cancel" in (run.error or "").lower()
        assert run.result is None
        _wait_idle(client)
        kinds = [e["kind"] for e in client.get(f"/runs/{run_id}/events").json()]
        assert kinds  # what it did before it was stopped stays recorded


@pytest.mark.slow
def test_a_finished_stream_leaves_nothing_running(tmp_path: Path) -> None:
    settings = api_settings(tmp_path)
    with LiveApi(settings) as live, live.client() as client:
        events = live.stream(client, "/csp/stream", {"symbol": "NVDA", "as_of": DAY})
        # Recorded as the stream ends; margin: 30 s for a busy machine.
        run = wait_finished(settings, events[-1].json()["run_id"], timeout=30)
        assert run.status == events[-1].json()["decision"]
        assert client.get("/health").json()["runs_active"] == 0


def test_closing_right_after_acceptance_leaves_nothing_running(slow_api: LiveApi) -> None:
    with slow_api.client() as client:
        with client.stream("POST", "/analyze/stream", json={"symbol": "KO", "as_of": DAY}) as r:
            accepted = next(parse_sse(r.iter_lines()))
        assert accepted.event == "accepted"
        _wait_idle(client)  # the slot comes back once the cancelled task has ended
        run = client.get(f"/runs/{accepted.json()['run_id']}")
        # cancelled before its first step (never recorded) or during it (interrupted)
        assert run.status_code == 404 or run.json()["status"] == "interrupted", run.text


@pytest.fixture(scope="module")
def slower_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveApi]:
    settings = api_settings(tmp_path_factory.mktemp("slower"))
    with LiveApi(settings, market=slow_market(settings, 1.0)) as live:
        yield live


@pytest.mark.parametrize("path", ["/analyze", "/csp"])
@pytest.mark.slow
def test_a_json_client_that_gives_up_cancels_its_run(slower_api: LiveApi, path: str) -> None:
    store = RunStore(slower_api.settings.store_path)
    before = {run.id for run in store.recent(limit=10_000)}
    with slower_api.client() as client:
        # Every bar read takes 1 s: the check before the run (one read) is over at 1 s and
        # the run's first read at 2 s at the earliest, so at 1.8 s the client hangs up
        # mid-run however fast the machine.
        with pytest.raises(httpx.ReadTimeout):
            client.post(path, json={"symbol": "NVDA", "as_of": DAY}, timeout=1.8)
        _wait_idle(client)
    (new,) = [run for run in store.recent(limit=10_000) if run.id not in before]
    run = wait_finished(slower_api.settings, new.id)
    assert run.status == "interrupted" and "cancel" in (run.error or "").lower()

"""The API with its runs in worker processes: a run streams from a worker in the order it
was recorded, every kind of run completes there, a client that leaves cancels the worker's
run, and a worker killed mid-run costs that run only (recorded interrupted, with why)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from alphadesk.api import create_app
from alphadesk.cli.app import app as cli_app
from alphadesk.config import Settings
from alphadesk.pool import WorkerPool
from alphadesk.serving import ServerConfig
from tests.api.conftest import DAY, api_settings, slow_market, wait_finished
from tests.support.live_api import LiveApi, SseEvent, parse_sse

pytestmark = pytest.mark.slow  # worker processes


@pytest.fixture(scope="module")
def pool_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveApi, WorkerPool]]:
    settings = api_settings(tmp_path_factory.mktemp("workers"))
    # every bar read in a worker takes 0.2 s longer: a run surely still going when a test acts
    pool = WorkerPool(settings, 2, market=partial(slow_market, delay=0.2))
    with LiveApi(settings, pool=pool) as live:
        yield live, pool


def _wait_idle(client: httpx.Client) -> None:
    # Margin: the slot frees within a second when idle; 120 s covers a busy machine.
    deadline = time.monotonic() + 120
    while client.get("/health").json()["runs_active"]:
        assert time.monotonic() < deadline, "the run slot was not released"
        time.sleep(0.05)


def _until_pipeline_event(events: Iterator[SseEvent]) -> tuple[SseEvent, list[SseEvent]]:
    seen = []
    for event in events:
        seen.append(event)
        if event.event != "accepted":
            return event, seen
    raise AssertionError(f"the stream ended before the run started: {seen}")


def test_a_run_streams_from_a_worker_in_the_order_it_is_recorded(
    pool_api: tuple[LiveApi, WorkerPool],
) -> None:
    live, pool = pool_api
    with live.client() as client:
        assert client.get("/health").json()["workers"] == 2
        with client.stream("POST", "/analyze/stream", json={"symbol": "KO", "as_of": DAY}) as r:
            events = parse_sse(r.iter_lines())
            first, seen = _until_pipeline_event(events)
            run_id = first.json()["run_id"]
            worker = pool.worker_of(run_id)
            assert worker in pool.pids and worker != os.getpid()  # not this process
            seen += list(events)
        assert seen[0].event == "accepted" and seen[-1].event == "result"
        recorded = client.get(f"/runs/{run_id}/events").json()
    streamed = [e.json() for e in seen[1:-1]]
    assert [e["kind"] for e in streamed] == [e["kind"] for e in recorded]
    assert [e["at"] for e in streamed] == [e["at"] for e in recorded]
    assert wait_finished(live.settings, run_id).status == seen[-1].json()["decision"]
    with live.client() as client:  # a replay runs in a worker too
        replayed = client.post(f"/runs/{run_id}/replay")
        assert replayed.status_code == 200, replayed.text
        assert replayed.json()["same_decision"] is True


@pytest.mark.parametrize(
    ("path", "body", "last"),
    [
        ("/csp", {"symbol": "NVDA", "as_of": DAY}, None),
        ("/screen", {"symbols": ["KO", "JPM"], "as_of": DAY}, None),
        ("/chat/v3", {"question": "how does KO look?", "as_of": DAY}, "chat_finished"),
    ],
)
def test_every_kind_of_run_completes_in_a_worker(
    pool_api: tuple[LiveApi, WorkerPool], path: str, body: dict[str, object], last: str | None
) -> None:
    live, _ = pool_api
    with live.client() as client:
        if last is None:
            answer = client.post(path, json=body)
            assert answer.status_code == 200, answer.text
            assert answer.json()
        else:
            events = live.stream(client, path, body)
            assert events[-1].event == last, events[-1]
            run = wait_finished(live.settings, events[-1].json()["result"]["run_id"])
            assert run.status not in ("running", "interrupted"), run


def test_closing_the_stream_cancels_the_workers_run(pool_api: tuple[LiveApi, WorkerPool]) -> None:
    live, pool = pool_api
    with live.client() as client:
        with client.stream("POST", "/csp/stream", json={"symbol": "JPM", "as_of": DAY}) as r:
            first, _ = _until_pipeline_event(parse_sse(r.iter_lines()))
        run_id = first.json()["run_id"]
        run = wait_finished(live.settings, run_id)
        assert run.status == "interrupted" and "cancel" in (run.error or "").lower()
        _wait_idle(client)  # the slot comes back once the worker said the run is over
        assert pool.worker_of(run_id) is None
        assert client.get(f"/runs/{run_id}/events").json()  # what it did stays recorded


def test_a_killed_worker_costs_its_run_only(pool_api: tuple[LiveApi, WorkerPool]) -> None:
    live, pool = pool_api
    with live.client() as client:
        with client.stream("POST", "/analyze/stream", json={"symbol": "HD", "as_of": DAY}) as r:
            events = parse_sse(r.iter_lines())
            first, _ = _until_pipeline_event(events)
            run_id = first.json()["run_id"]
            victim = pool.worker_of(run_id)
            assert victim is not None
            os.kill(victim, signal.SIGKILL)
            rest = list(events)
        error = rest[-1]
        assert error.event == "error", rest[-3:]
        assert error.json()["error"]["type"] == "worker_died"
        run = wait_finished(live.settings, run_id)
        assert run.status == "interrupted"
        assert "worker process running it died (killed by SIGKILL)" in (run.error or "")
        # the server goes on: a new run completes, on a full pool without the dead worker
        events = live.stream(client, "/analyze/stream", {"symbol": "KO", "as_of": DAY})
        assert events[-1].event == "result"
        assert victim not in pool.pids and len(pool.pids) == 2
        assert client.get("/health").json()["runs_active"] == 0


@pytest.mark.parametrize("workers", ["0", "-2"])
def test_serve_refuses_fewer_than_one_worker(tmp_path: Path, workers: str) -> None:
    done = CliRunner().invoke(
        cli_app, ["serve", "--workers", workers], env={"ALPHADESK_DATA_DIR": str(tmp_path)}
    )
    assert done.exit_code == 2, done.output
    assert f"--workers must be at least 1, not {workers}" in done.stderr


def test_a_pool_of_no_workers_is_refused(tmp_path: Path) -> None:
    settings = api_settings(tmp_path)
    with pytest.raises(ValueError, match="at least 1 worker, not 0"):
        WorkerPool(settings, 0)
    with pytest.raises(ValueError, match="workers must be at least 1, not -1"):
        create_app(settings, ServerConfig(workers=-1))
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        Settings(data_dir=tmp_path, server={"workers": 0})

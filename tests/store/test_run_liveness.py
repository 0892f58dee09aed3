"""A run's owner and liveness: a run whose process is gone reads as interrupted, with the
command that resumes it; a live one cannot be taken over; older store files gain the
owner columns; a run in progress writes through one connection, in batches."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.support.connections import connections_opened

from alphadesk.agent.events import ModelResponded, RunFinished, RunStarted
from alphadesk.agent.usage import LedgerEntry
from alphadesk.llm.messages import AssistantMessage, ModelResponse, Usage
from alphadesk.pipelines.events import StepFinished
from alphadesk.store import RunBusy, RunConflict, RunStore, runs
from alphadesk.store.owner import _start_token, current_owner

AS_OF = datetime(2024, 11, 29, 21, tzinfo=UTC)


def _owned_by(
    store: RunStore, run_id: str, pid: int, host: str, started: str | None, heartbeat: datetime
) -> None:
    with sqlite3.connect(store.path) as db:
        db.execute(
            "UPDATE runs SET owner_pid = ?, owner_host = ?, owner_started = ?, heartbeat_at = ?"
            " WHERE id = ?",
            (pid, host, started, heartbeat.isoformat(), run_id),
        )


def _csp(store: RunStore) -> str:
    return store.start(
        kind="csp", title="csp NVDA", request={"symbol": "NVDA"}, as_of=AS_OF, model="rules"
    )


def test_a_run_whose_process_is_gone_reads_as_interrupted(data_dir: Path) -> None:
    store = RunStore(data_dir / "alphadesk.sqlite")
    run_id = _csp(store)
    assert store.get(run_id).status == "running"  # this process owns it and is alive
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    me = current_owner()
    _owned_by(store, run_id, gone.pid, me.host, None, datetime.now(UTC))
    run = store.get(run_id)
    assert run.status == "interrupted"
    assert run.resume_command == f"alphadesk csp NVDA --as-of 2024-11-29 --resume {run_id}"
    assert run.error is not None and run.resume_command in run.error
    assert [r.status for r in store.recent()] == ["interrupted"]
    store.claim(run_id)  # resuming takes it over
    assert store.get(run_id).status == "running" and store.get(run_id).owner_pid == os.getpid()


def test_a_recycled_pid_is_not_the_owner(data_dir: Path) -> None:
    store = RunStore(data_dir / "alphadesk.sqlite")
    run_id = _csp(store)
    parent = os.getppid()  # alive, but started at another time than the recorded owner
    if _start_token(parent) is None:
        pytest.skip("no process start times on this system")
    _owned_by(store, run_id, parent, current_owner().host, "boot:1", datetime.now(UTC))
    assert store.get(run_id).status == "interrupted"


def test_a_run_still_running_elsewhere_cannot_be_taken_over(data_dir: Path) -> None:
    store = RunStore(data_dir / "alphadesk.sqlite")
    run_id = _csp(store)
    parent = os.getppid()
    _owned_by(store, run_id, parent, current_owner().host, _start_token(parent), datetime.now(UTC))
    assert store.get(run_id).status == "running"
    with pytest.raises(RunBusy, match="still running"):
        store.claim(run_id)
    store.finish(run_id, status="select")
    with pytest.raises(RunConflict, match="already finished"):
        store.claim(run_id)


def test_another_hosts_run_is_alive_while_its_heartbeat_is_fresh(data_dir: Path) -> None:
    store = RunStore(data_dir / "alphadesk.sqlite")
    run_id = _csp(store)
    _owned_by(store, run_id, 1234, "elsewhere", None, datetime.now(UTC))
    assert store.get(run_id).status == "running"
    _owned_by(store, run_id, 1234, "elsewhere", None, datetime.now(UTC) - timedelta(hours=1))
    assert store.get(run_id).status == "interrupted"


def test_an_older_store_file_gains_the_owner_columns(data_dir: Path) -> None:
    path = data_dir / "alphadesk.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE runs (id TEXT PRIMARY KEY, kind TEXT NOT NULL, title TEXT NOT NULL,"
            " status TEXT NOT NULL, created_at TEXT NOT NULL, finished_at TEXT, as_of TEXT,"
            " model TEXT, request TEXT NOT NULL, result TEXT, error TEXT)"
        )
        db.execute(
            "INSERT INTO runs VALUES ('old', 'csp', 'csp NVDA', 'running', ?, NULL, NULL,"
            " 'rules', '{}', NULL, NULL)",
            (datetime.now(UTC).isoformat(),),
        )
    store = RunStore(path)
    assert store.get("old").status == "running"  # no owner recorded: nothing to decide on
    assert store.get(_csp(store)).owner_pid == os.getpid()


def test_a_run_in_progress_writes_through_the_stores_connection_in_batches(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = RunStore(data_dir / "alphadesk.sqlite")
    run_id = _csp(store)
    opened = connections_opened(monkeypatch)
    writer = store.writer(run_id)
    for i in range(60):  # every third event ends a step
        if i % 3 == 2:
            writer.event(StepFinished(run_id=run_id, agent=f"a{i}", symbol="X", status="completed"))
        elif i % 3 == 1:  # an agent's run ending inside a step: no boundary
            writer.event(RunFinished(run_id=run_id, agent=f"a{i}", outcome="completed"))
        else:
            writer.event(RunStarted(run_id=run_id, agent=f"a{i}", model="m", as_of=AS_OF, tools=[]))
    writer.close()
    monkeypatch.undo()
    assert opened == []  # the store's own connection reads where the run stands and writes it
    assert writer.flushes == 20
    assert [e["agent"] for e in store.events(run_id)] == [f"a{i}" for i in range(60)]


def test_a_run_that_is_not_resumable_writes_at_a_boundary_only_after_a_quiet_spell(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asked again whole when stopped, such a run gains nothing from a write per step: it
    writes on close, and at a boundary only when its last write is old (its heartbeat)."""
    store = RunStore(data_dir / "alphadesk.sqlite")
    run_id = _csp(store)
    writer = store.writer(run_id, resumable=False)
    for i in range(6):
        writer.event(StepFinished(run_id=run_id, agent=f"a{i}", symbol="X", status="completed"))
    assert writer.flushes == 0 and store.events(run_id) == []
    monkeypatch.setattr(runs, "_UNRESUMABLE_FLUSH_S", 0.0)  # the half minute has passed
    writer.event(StepFinished(run_id=run_id, agent="a6", symbol="X", status="completed"))
    assert writer.flushes == 1 and len(store.events(run_id)) == 7
    writer.event(RunFinished(run_id=run_id, agent="a7", outcome="completed"))  # no boundary
    assert writer.flushes == 1
    writer.close()
    assert [e["agent"] for e in store.events(run_id)] == [f"a{i}" for i in range(8)]


def test_a_completed_model_call_its_response_and_ledger_entry_are_written_together(
    data_dir: Path,
) -> None:
    """The call's response, event and ledger entry in one transaction: a crash keeps all
    or none, and a call costs one write, not three."""
    store = RunStore(data_dir / "alphadesk.sqlite")
    run_id = _csp(store)
    writer = store.writer(run_id)
    writer.event(RunStarted(run_id=run_id, agent="a", model="m", as_of=AS_OF, tools=[]))
    entries = [
        LedgerEntry(
            agent="a",
            model="m",
            input_tokens=i,
            output_tokens=1,
            cost_usd=0.0,
            latency_s=0.1,
            cached=False,
            at=AS_OF,
        )
        for i in (10, 20)
    ]
    for turn in range(len(entries)):
        answer = ModelResponse(message=AssistantMessage(content=f"answer {turn}"), model="m")
        writer.call(f"key-{turn}", answer)
        assert len(store.calls(run_id)) == turn  # not before its event
        event = ModelResponded(
            run_id=run_id, agent="a", turn=turn, model="m", text="ok", tool_calls=[],
            usage=Usage(requests=1), latency_s=0.1, cached=False,
        )  # fmt: skip
        writer.event(event, entries[: turn + 1])
        assert writer.flushes == turn + 1
        assert store.calls(run_id)[-1][0] == f"key-{turn}"
        assert [e["input_tokens"] for e in store.ledger(run_id)] == [10, 20][: turn + 1]
        assert [e["kind"] for e in store.events(run_id)][-1] == "model_response"
    writer.close()
    assert len(store.events(run_id)) == 3 and len(store.ledger(run_id)) == 2


def test_an_event_sent_after_the_run_finished_is_still_stored(data_dir: Path) -> None:
    store = RunStore(data_dir / "alphadesk.sqlite")
    run_id = _csp(store)
    writer = store.writer(run_id)
    writer.close()
    writer.event(RunStarted(run_id=run_id, agent="late", model="m", as_of=AS_OF, tools=[]))
    assert [e["agent"] for e in store.events(run_id)] == ["late"]


def test_an_interrupted_screen_says_how_to_resume_it(data_dir: Path) -> None:
    store = RunStore(data_dir / "alphadesk.sqlite")
    run_id = store.start(kind="screen", title="csp screen", request={"symbols": ["NVDA"]},
                         as_of=AS_OF, model="rules")  # fmt: skip
    store.finish(run_id, status="interrupted", error="stopped")
    assert store.get(run_id).resume_command == f"alphadesk screen --resume {run_id}"


def _owner_pid(queue: Any) -> None:
    queue.put((os.getpid(), current_owner().pid))


def test_a_forked_process_owns_its_runs_as_itself() -> None:
    current_owner()  # cached in the parent before the fork
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_owner_pid, args=(queue,))
    child.start()
    pid, owner_pid = queue.get(timeout=30)
    child.join(timeout=30)
    assert pid != os.getpid() and owner_pid == pid

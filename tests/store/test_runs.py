"""The run store keeps runs, events, ledgers and artifacts; the CLI reads them back."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from alphadesk.agent import Agent, RunScope, UsageLedger
from alphadesk.agent.events import RunStarted
from alphadesk.cli.app import app
from alphadesk.llm.testing import ScriptedModel
from alphadesk.pipelines.recording import RunRecorder
from alphadesk.store import RunNotFound, RunStore

AS_OF = datetime(2021, 6, 30, 20, tzinfo=UTC)


def test_a_recorded_agent_run_can_be_read_back(data_dir: Path) -> None:
    store = RunStore(data_dir / "runs.sqlite")
    recorder = RunRecorder.start(
        store,
        kind="demo",
        title="echo MSFT",
        request={"symbol": "MSFT"},
        as_of=AS_OF,
        model="scripted",
    )
    agent: Agent[None, str] = Agent(name="echo", instructions="Echo.", output_type=str)
    result = _run(agent, recorder)
    recorder.finish(status="completed", result={"answer": result})

    run = store.get(recorder.run_id)
    assert run.status == "completed" and run.kind == "demo" and run.as_of == AS_OF
    assert run.request == {"symbol": "MSFT"} and run.result == {"answer": "MSFT looks fine."}
    assert run.finished_at is not None and run.finished_at >= run.created_at
    kinds = [e["kind"] for e in store.events(run.id)]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    ledger = store.ledger(run.id)
    assert len(ledger) == 1 and ledger[0]["agent"] == "echo" and ledger[0]["model"] == "scripted"


def _run(agent: Agent[None, str], recorder: RunRecorder) -> str:
    import asyncio

    model = ScriptedModel(["MSFT looks fine."])
    result = asyncio.run(
        agent.run(
            model,
            "Echo MSFT",
            deps=None,
            scope=RunScope(
                as_of=AS_OF, run_id=recorder.run_id, ledger=recorder.ledger, on_event=recorder.emit
            ),
        )
    )
    return result.output


def test_unknown_run_and_listing_order(data_dir: Path) -> None:
    store = RunStore(data_dir / "runs.sqlite")
    with pytest.raises(RunNotFound, match="alphadesk runs list"):
        store.get("nope")
    with pytest.raises(RunNotFound):
        store.finish("nope", status="completed")
    ids = [store.start(kind="k", title=f"run {i}", request={}) for i in range(3)]
    assert [r.id for r in store.recent(limit=2)] == ids[::-1][:2]
    assert store.recent(kind="other") == []


def test_concurrent_writers_lose_nothing(data_dir: Path) -> None:
    store = RunStore(data_dir / "runs.sqlite")
    run_id = store.start(kind="k", title="busy", request={})

    def write(i: int) -> None:
        RunStore(store.path).append_event(
            run_id, RunStarted(run_id=run_id, agent=f"a{i}", model="m", as_of=AS_OF, tools=[])
        )

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(write, range(40)))
    events = store.events(run_id)
    assert len(events) == 40
    assert {e["agent"] for e in events} == {f"a{i}" for i in range(40)}


def test_cli_lists_and_shows_runs(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALPHADESK_DATA_DIR", str(data_dir))
    monkeypatch.setenv("COLUMNS", "160")
    store = RunStore(data_dir / "alphadesk.sqlite")
    run_id = store.start(
        kind="csp", title="csp MSFT", request={"symbols": ["MSFT"]}, as_of=AS_OF, model="rules"
    )
    ledger = UsageLedger()
    store.record_ledger(run_id, ledger.entries)
    report = data_dir / "report.md"
    report.write_text("# MSFT\n\nSell the 250 put.")
    store.add_artifact(run_id, "report.md", report, "text/markdown")
    store.finish(run_id, status="completed", result={"decision": "select"})

    runner = CliRunner()
    listed = runner.invoke(app, ["runs", "list"])
    assert listed.exit_code == 0, listed.output
    assert run_id in listed.output and "completed" in listed.output

    shown = runner.invoke(app, ["runs", "show", run_id])
    assert shown.exit_code == 0, shown.output
    assert "Sell the 250 put." in shown.output and "model calls: 0" in shown.output

    as_json = runner.invoke(app, ["runs", "show", run_id, "--json"])
    assert json.loads(as_json.output) == {"decision": "select"}

    missing = runner.invoke(app, ["runs", "show", "does-not-exist"])
    assert missing.exit_code == 1
    assert "no run 'does-not-exist'" in missing.output

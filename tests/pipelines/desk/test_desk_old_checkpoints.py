"""A desk run checkpointed before its graph state was typed (the analysts' reports under one
``analysts`` key) cannot be resumed: the runner and the command line say so and what to do,
with no traceback and without running a step; a checkpoint that only still holds the
request (from before the request left the state) resumes as any other."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from typer.testing import CliRunner

from alphadesk.cli.app import app
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.pipelines.base import CheckpointIncompatible
from alphadesk.pipelines.checkpoints import run_checkpoints
from alphadesk.pipelines.desk.models import DeskRequest
from alphadesk.pipelines.desk.pipeline import TradingDesk
from alphadesk.pipelines.runner import PipelineRunner
from alphadesk.store import RunStore
from tests.pipelines.conftest import close_of

_ANALYSTS = ("market", "sentiment", "news", "fundamentals")


async def _interrupted(
    settings: Settings, market: MarketData
) -> tuple[PipelineRunner[Any, Any], str]:
    """A desk run stopped after its briefing, as an interrupted run is; its id."""
    runner = PipelineRunner(settings, TradingDesk(settings, market))
    request = DeskRequest(symbol="AAPL", as_of=close_of("2012-03-30"), memory=False)
    assert await runner.analyze(request, interrupt_after=["brief"]) is None
    (run,) = RunStore(settings.store_path).recent(kind="desk")
    return runner, run.id


async def _rewrite(settings: Settings, run_id: str, change: Any) -> None:
    """Put a last checkpoint whose channel values are ``change(values)``."""
    path = settings.data_dir / "checkpoints" / f"{run_id}.sqlite"
    config: Any = {"configurable": {"thread_id": run_id, "checkpoint_ns": ""}}
    with run_checkpoints(path) as saver:
        saved = await saver.aget_tuple(config)
        assert saved is not None
        checkpoint = dict(saved.checkpoint)
        checkpoint["channel_values"] = change(dict(checkpoint["channel_values"]))
        await saver.aput(saved.config, checkpoint, saved.metadata, {})  # type: ignore[arg-type]


def _before_typed_state(values: dict[str, Any]) -> dict[str, Any]:
    values["analysts"] = {name: values.pop(name) for name in _ANALYSTS if name in values}
    return values


async def test_an_old_desk_checkpoint_is_refused_with_what_to_do(
    settings: Settings, market: MarketData
) -> None:
    runner, run_id = await _interrupted(settings, market)
    await _rewrite(settings, run_id, _before_typed_state)
    ledger = len(RunStore(settings.store_path).ledger(run_id))

    request = DeskRequest(symbol="AAPL", as_of=close_of("2012-03-30"), memory=False)
    with pytest.raises(CheckpointIncompatible) as refused:
        await runner.analyze(request, resume_run_id=run_id)
    said = str(refused.value)
    assert run_id in said and "'analysts'" in said and "without --resume" in said
    assert len(RunStore(settings.store_path).ledger(run_id)) == ledger  # no step ran


async def test_a_checkpoint_whose_state_reads_wrong_is_refused(
    settings: Settings, market: MarketData
) -> None:
    runner, run_id = await _interrupted(settings, market)

    def old_facts(values: dict[str, Any]) -> dict[str, Any]:
        return values | {"facts": {"close": "one hundred"}}  # a key kept, its shape changed

    await _rewrite(settings, run_id, old_facts)
    request = DeskRequest(symbol="AAPL", as_of=close_of("2012-03-30"), memory=False)
    with pytest.raises(CheckpointIncompatible, match=r"\['facts'\] changed"):
        await runner.analyze(request, resume_run_id=run_id)


async def test_a_checkpoint_still_holding_the_request_resumes(
    settings: Settings, market: MarketData
) -> None:
    runner, run_id = await _interrupted(settings, market)
    request = DeskRequest(symbol="AAPL", as_of=close_of("2012-03-30"), memory=False)
    await _rewrite(settings, run_id, lambda v: v | {"request": request.model_dump(mode="json")})
    result = await runner.analyze(request, resume_run_id=run_id)
    assert result is not None and result.decision == "BUY" and result.run_id == run_id


def test_the_command_line_says_to_run_again_without_resume(
    settings: Settings, market: MarketData, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, run_id = asyncio.run(_interrupted(settings, market))
    asyncio.run(_rewrite(settings, run_id, _before_typed_state))
    monkeypatch.setenv("ALPHADESK_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("COLUMNS", "200")

    out = CliRunner().invoke(app, ["desk", "AAPL", "--resume", run_id, "--model", "rules"])
    assert out.exit_code != 0
    assert "cannot be resumed" in out.output and "without --resume" in out.output
    assert isinstance(out.exception, SystemExit)  # a message, not a traceback

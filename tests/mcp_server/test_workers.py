"""``alphadesk mcp --workers N`` as a client sees it: the run tools' runs go to the server's worker
processes, their progress streamed back; a cancelled or timed-out call cancels the
worker's run (recorded interrupted); a killed worker costs its call only (an MCP error
naming it, the run recorded interrupted with why) and the next call is served."""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TextIO

import anyio
import pytest
from mcp import ClientSession, types
from mcp.shared.exceptions import MCPError
from typer.testing import CliRunner

from alphadesk.cli.app import app
from alphadesk.config import Settings
from alphadesk.store.runs import RunRecord, RunStore
from tests.mcp_server.client import mcp_session

pytestmark = pytest.mark.slow  # a server and its worker processes

_CSP = {"symbol": "NVDA", "as_of": "2025-02-14"}


@contextmanager
def server_log(tmp_path: Path) -> Iterator[TextIO]:
    with (tmp_path / "server.log").open("w+") as log:
        yield log


async def worker_pids(log: TextIO) -> list[int]:
    """The worker pids the server says on stderr once its workers are ready."""
    for _ in range(300):
        log.seek(0)
        if said := re.search(r"worker process(?:es)? \(pid ([\d, ]+)\)", log.read()):
            return [int(pid) for pid in said.group(1).split(", ")]
        await anyio.sleep(0.1)
    raise AssertionError("the server never said its workers' pids")


def cpu_ticks(pid: int) -> int:
    """The user and system CPU time ``pid`` has used, in clock ticks."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


async def settled(store: RunStore, kind: str) -> list[RunRecord]:
    """The runs of ``kind``, once none is still running."""
    for _ in range(150):
        runs = store.recent(kind=kind)
        if runs and all(run.status != "running" for run in runs):
            return runs
        await anyio.sleep(0.2)
    return store.recent(kind=kind)


async def call_until_first_progress(
    session: ClientSession, tool: str, then: Callable[[], object]
) -> BaseException | types.CallToolResult:
    """Call ``tool``; at its first progress notification run ``then()``; what the call
    returned or raised."""
    started = anyio.Event()
    outcome: list[BaseException | types.CallToolResult] = []

    async def on_progress(_done: float, _total: float | None, _message: str | None) -> None:
        started.set()

    async def call() -> None:
        try:
            outcome.append(await session.call_tool(tool, _CSP, progress_callback=on_progress))
        except MCPError as exc:
            outcome.append(exc)

    async with anyio.create_task_group() as group:
        group.start_soon(call)
        with anyio.fail_after(90):
            await started.wait()
        then()
    return outcome[0]


async def test_a_desk_runs_in_a_worker_and_streams_its_progress(
    data_dir: Path, tmp_path: Path
) -> None:
    messages: list[str] = []

    async def on_progress(_done: float, _total: float | None, message: str | None) -> None:
        messages.append(message or "")

    with server_log(tmp_path) as log:  # [server] workers, as for alphadesk serve
        async with mcp_session(data_dir, errlog=log, ALPHADESK_SERVER__WORKERS="1") as session:
            [worker] = await worker_pids(log)
            before = cpu_ticks(worker)
            result = await session.call_tool("run_csp_desk", _CSP, progress_callback=on_progress)
            spent = cpu_ticks(worker) - before
    assert not result.is_error
    assert result.structured_content is not None and result.structured_content["run_id"]
    assert spent > 0  # the desk's work was done in the worker process
    assert len(messages) >= 3 and any(m.endswith(" started") for m in messages)
    run = RunStore(Settings(data_dir=data_dir).store_path).get(result.structured_content["run_id"])
    assert run.kind == "csp" and run.status == result.structured_content["decision"]


async def test_a_cancelled_call_cancels_the_workers_run(data_dir: Path, tmp_path: Path) -> None:
    with server_log(tmp_path) as log:
        async with mcp_session(data_dir, "--workers", "1", errlog=log) as session:
            [worker] = await worker_pids(log)
            started = anyio.Event()

            async def on_progress(_done: float, _total: float | None, _said: str | None) -> None:
                started.set()

            async with anyio.create_task_group() as group:
                group.start_soon(partial(session.call_tool, progress_callback=on_progress),
                                 "run_csp_desk", _CSP)  # fmt: skip
                with anyio.fail_after(90):
                    await started.wait()
                group.cancel_scope.cancel()  # the client gives up: notifications/cancelled
            runs = await settled(RunStore(Settings(data_dir=data_dir).store_path), "csp")
            before = cpu_ticks(worker)
            again = await session.call_tool("run_csp_desk", _CSP)
            spent = cpu_ticks(worker) - before
    assert [run.status for run in runs] == ["interrupted"]
    assert "Cancelled" in (runs[0].error or "")
    assert not again.is_error and spent > 0  # the same worker goes on serving


async def test_a_call_past_the_time_limit_stops_the_workers_run(data_dir: Path) -> None:
    async with mcp_session(
        data_dir, "--workers", "1", ALPHADESK_MCP__CALL_TIMEOUT_S="0.05"
    ) as session:
        result = await session.call_tool("run_trading_desk", _CSP)
        runs = await settled(RunStore(Settings(data_dir=data_dir).store_path), "desk")
    assert result.is_error
    text = "".join(c.text for c in result.content if isinstance(c, types.TextContent))
    assert "ran past the server's limit of 0.05 s" in text
    # Stopped before or after its worker began the run: never completed, at most interrupted.
    assert [run.status for run in runs] in ([], ["interrupted"])


async def test_a_killed_worker_costs_its_call_only(data_dir: Path, tmp_path: Path) -> None:
    with server_log(tmp_path) as log:
        async with mcp_session(data_dir, "--workers", "1", errlog=log) as session:
            [worker] = await worker_pids(log)
            outcome = await call_until_first_progress(
                session, "run_trading_desk", lambda: os.kill(worker, signal.SIGKILL)
            )
            runs = await settled(RunStore(Settings(data_dir=data_dir).store_path), "desk")
            after = await session.call_tool("run_csp_desk", _CSP)
    assert isinstance(outcome, MCPError), outcome
    assert f"died (killed by SIGKILL), pid {worker}" in str(outcome)
    assert [run.status for run in runs] == ["interrupted"]
    assert "worker process running it died (killed by SIGKILL)" in (runs[0].error or "")
    assert not after.is_error  # a fresh worker took the dead one's place
    assert after.structured_content is not None and after.structured_content["run_id"]


def test_fewer_than_one_worker_is_refused_before_serving() -> None:
    refused = CliRunner().invoke(app, ["mcp", "--workers", "0"])
    assert refused.exit_code == 2
    assert "--workers must be at least 1, not 0" in refused.output

"""A backtest of strategy code stopped by its client or by the server's time limit: the
sandboxed process is killed at once, not at its own limit, and the run is recorded
interrupted."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest
from mcp import types

from alphadesk.backtest.sandbox import SandboxUnavailable, find_sandbox
from alphadesk.config import Settings
from alphadesk.store.runs import RunStore
from tests.mcp_server.client import mcp_session
from tests.support.processes import FOREVER, alive, sandbox_tree

pytestmark = pytest.mark.slow

# Far past the test: only a kill by the server ends the loop in time.
_CALL = {"symbol": "KO", "code": FOREVER, "start": "2022-01-03", "end": "2022-06-30",
         "time_limit_s": 600}  # fmt: skip


@pytest.fixture(autouse=True)
def _needs_sandbox() -> None:
    try:
        find_sandbox()
    except SandboxUnavailable as exc:
        pytest.skip(f"no sandbox on this machine: strategy code never runs ({exc})")


async def _sandbox_started(marker: str) -> set[int]:
    """The sandbox's processes once its strategy runs (bwrap and the runner under it)."""
    for _ in range(600):
        tree = sandbox_tree(marker)
        if len(tree) >= 2:
            return tree
        await anyio.sleep(0.1)
    raise AssertionError("the sandbox never started")


async def _gone(pids: set[int], within: float) -> float:
    """Seconds until none of ``pids`` is alive; fails past ``within``."""
    began = time.monotonic()
    for _ in range(int(within / 0.05)):
        if not any(alive(pid) for pid in pids):
            return time.monotonic() - began
        await anyio.sleep(0.05)
    raise AssertionError(f"the sandbox still runs {within:g} s after the call ended")


async def _settled(store: RunStore) -> list[str]:
    for _ in range(100):  # the server records the interruption as it unwinds
        runs = store.recent(kind="backtest")
        if runs and runs[0].status != "running":
            break
        await anyio.sleep(0.1)
    return [run.status for run in runs]


async def test_a_cancelled_backtest_kills_its_sandbox_at_once(
    data_dir: Path, tmp_path: Path
) -> None:
    jobs = tmp_path / "jobs"  # the server's temporary folder: the sandbox's job is in it
    jobs.mkdir()
    async with mcp_session(data_dir, TMPDIR=str(jobs)) as session:
        async with anyio.create_task_group() as group:
            group.start_soon(session.call_tool, "backtest", _CALL)
            running = await _sandbox_started(str(jobs))
            group.cancel_scope.cancel()  # the client gives up: notifications/cancelled
        took = await _gone(running, within=3)
        statuses = await _settled(RunStore(Settings(data_dir=data_dir).store_path))
        after = await session.call_tool("backtest", {"symbol": "KO", "strategy": "buy_hold"})
    assert took < 3 and statuses == ["interrupted"]
    assert not after.is_error  # the server goes on


async def test_a_backtest_past_the_call_limit_kills_its_sandbox(
    data_dir: Path, tmp_path: Path
) -> None:
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    env = {"TMPDIR": str(jobs), "ALPHADESK_MCP__CALL_TIMEOUT_S": "15"}
    result: list[types.CallToolResult] = []
    async with mcp_session(data_dir, **env) as session:
        async with anyio.create_task_group() as group:

            async def call() -> None:
                result.append(await session.call_tool("backtest", _CALL))

            group.start_soon(call)
            running = await _sandbox_started(str(jobs))
        took = await _gone(running, within=3)  # the call has returned: at the time limit
        statuses = await _settled(RunStore(Settings(data_dir=data_dir).store_path))
    text = "\n".join(c.text for c in result[0].content if isinstance(c, types.TextContent))
    assert result[0].is_error and "[mcp] call_timeout_s" in text
    assert took < 3 and statuses == ["interrupted"]

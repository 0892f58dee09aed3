"""A run's checkpoints, written inline: what is put is read back, listing them while the
graph writes more does not wait forever, a file reopened later resumes where it was, and a
killed process loses none of them."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import empty_checkpoint

from alphadesk.pipelines.checkpoints import RunCheckpoints, discard, run_checkpoints


async def _put(saver: RunCheckpoints, thread: str, step: int) -> dict[str, Any]:
    config: Any = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"step": step}
    saved: dict[str, Any] = await saver.aput(config, checkpoint, {"step": step}, {})  # type: ignore[arg-type]
    return saved


async def test_checkpoints_are_read_back_and_listed_while_more_are_written(
    tmp_path: Path,
) -> None:
    path = tmp_path / "checkpoints" / "run-1.sqlite"
    with run_checkpoints(path) as saver:
        for step in range(3):
            await _put(saver, "run-1", step)
        config: Any = {"configurable": {"thread_id": "run-1"}}
        latest = await saver.aget_tuple(config)
        assert latest is not None and latest.checkpoint["channel_values"] == {"step": 2}

        async def list_and_write() -> list[int]:
            seen = []
            async for item in saver.alist(config):
                seen.append(item.metadata["step"])
                await _put(saver, "run-1", 10 + len(seen))  # a write while listing
            return seen

        seen = await asyncio.wait_for(list_and_write(), timeout=10)
        assert seen == [2, 1, 0]
    with run_checkpoints(path) as reopened:  # a resumed run finds them in the file
        latest = await reopened.aget_tuple(config)
        assert latest is not None and latest.checkpoint["channel_values"] == {"step": 13}
    discard(path)
    assert list(path.parent.iterdir()) == []


_KILLED_WRITER = """
import asyncio, os, signal, sys
from pathlib import Path
from langgraph.checkpoint.base import empty_checkpoint
from alphadesk.pipelines.checkpoints import run_checkpoints

async def main():
    with run_checkpoints(Path(sys.argv[1])) as saver:
        for step in range(3):
            checkpoint = empty_checkpoint()
            checkpoint["channel_values"] = {"step": step}
            config = {"configurable": {"thread_id": "run-1", "checkpoint_ns": ""}}
            await saver.aput(config, checkpoint, {"step": step}, {})
        os.kill(os.getpid(), signal.SIGKILL)  # no close, no checkpoint of the log

asyncio.run(main())
"""


async def test_a_killed_process_loses_none_of_its_checkpoints(tmp_path: Path) -> None:
    path = tmp_path / "checkpoints" / "run-1.sqlite"
    killed = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _KILLED_WRITER, str(path), env={**os.environ}
    )
    assert await killed.wait() == -signal.SIGKILL
    with run_checkpoints(path) as reopened:
        latest = await reopened.aget_tuple({"configurable": {"thread_id": "run-1"}})
    assert latest is not None and latest.checkpoint["channel_values"] == {"step": 2}

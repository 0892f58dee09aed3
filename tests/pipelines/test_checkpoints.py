"""A run's checkpoints, written inline: what is put is read back, listing them while the
graph writes more does not wait forever, and a file reopened later resumes where it was."""

from __future__ import annotations

import asyncio
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

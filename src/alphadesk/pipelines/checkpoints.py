"""A run's graph checkpoints: one SQLite file per run, written on the event loop's thread.

Each run has a file of its own (named by the run id, where a resume finds it). One shared
file made concurrent runs queue on its write lock, held across event-loop turns between
each insert and its commit: under load (a server's fifty streams) writers waited past the
busy timeout and failed with 'database is locked'.

Written in WAL mode without any disk flush (``synchronous=OFF``, set before the file is
made): a killed process still loses no checkpoint (what it wrote is in the system's
cache); only a machine crash can lose or damage them, costing that run its resume. A file
lives for one run, so the flushes a store pays for (creating the log, checkpointing it at close)
were most of a run's checkpoint cost: 5 ms a run, tens on a busy disk, 2 ms without. With
nobody else writing the file a checkpoint write takes tens of microseconds, less than
handing it to a database thread and back (what ``aiosqlite`` does, twice per checkpoint),
so the writes run inline.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.sqlite import SqliteSaver

from alphadesk.store.private import private_file, private_folder

__all__ = ["RunCheckpoints", "discard", "run_checkpoints"]


class RunCheckpoints(SqliteSaver):
    """The SQLite checkpointer of one run, its async methods answering inline."""

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.get_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        # Read to the end first: the reading holds the saver's lock, which a write made
        # meanwhile by the caller of this iterator would wait for forever.
        for item in [*self.list(config, filter=filter, before=before, limit=limit)]:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        self.delete_thread(thread_id)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, Any]:
        return self.get_delta_channel_history(config=config, channels=channels)


@contextmanager
def run_checkpoints(path: Path) -> Iterator[RunCheckpoints]:
    """The checkpoints in ``path`` (created if new), closed on leaving."""
    private_folder(path.parent)  # a run's state is its owner's alone, like the data folder
    private_file(path)
    conn = sqlite3.connect(str(path), timeout=60, check_same_thread=False)
    try:
        conn.execute("PRAGMA synchronous=OFF")  # first: creating the log flushes nothing
        conn.execute("PRAGMA journal_mode=WAL")
        yield RunCheckpoints(conn)
    finally:
        conn.close()


def discard(database: Path) -> None:
    """Delete an SQLite file with its write-ahead log and shared-memory index."""
    for suffix in ("", "-wal", "-shm"):
        database.with_name(database.name + suffix).unlink(missing_ok=True)

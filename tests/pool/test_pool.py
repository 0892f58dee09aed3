"""The worker pool on its own: a job's events arrive in order and its value or its typed
error comes back; cancelling the caller cancels the job; a worker is replaced after
``max_runs`` jobs."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from alphadesk.agent.events import EventSink
from alphadesk.config import Settings
from alphadesk.data.errors import NoData
from alphadesk.pool import WorkerEnv, WorkerPool

pytestmark = pytest.mark.slow  # worker processes


async def numbered(env: WorkerEnv, emit: EventSink, count: int) -> tuple[int, str]:
    for i in range(count):
        emit(i)
    return os.getpid(), str(env.settings.data_dir)


async def no_data(env: WorkerEnv, emit: EventSink) -> None:
    raise NoData("ZZZZ: no provider had daily bars", suggestions=["ZZZ"])


class _Unpicklable(Exception):
    def __init__(self, what: str, code: int) -> None:  # pickle rebuilds it with one argument
        super().__init__(f"{what} ({code})")


async def odd_error(env: WorkerEnv, emit: EventSink) -> None:
    raise _Unpicklable("the tool broke", 7)


async def forever(env: WorkerEnv, emit: EventSink, flag: str) -> None:
    try:
        emit("started")
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        await asyncio.to_thread(Path(flag).write_text, "cancelled")
        raise


async def interleaved(env: WorkerEnv, emit: EventSink, name: str, count: int) -> None:
    """Events from the loop, several a step, and from a tool's thread."""
    for i in range(count):
        if i % 7 == 0:
            await asyncio.to_thread(emit, (name, i))
        else:
            emit((name, i))
        if i % 3 == 0:
            await asyncio.sleep(0)


async def with_a_lock(env: WorkerEnv, emit: EventSink) -> None:
    emit(1)
    emit(threading.Lock())  # pickle cannot carry it
    emit(2)


async def blocking(env: WorkerEnv, emit: EventSink, seconds: float) -> None:
    time.sleep(seconds)  # noqa: ASYNC251  # holds the worker's loop: what the server sends waits


async def jobs_running(env: WorkerEnv, emit: EventSink) -> int:
    return len(asyncio.all_tasks()) - 2  # not the worker's own task, nor this one


async def niceness(env: WorkerEnv, emit: EventSink) -> int:
    return os.getpriority(os.PRIO_PROCESS, 0)


async def chatty(env: WorkerEnv, emit: EventSink, said: str) -> None:
    print(said, flush=True)
    os.write(1, f"{said} raw\n".encode())


@pytest.fixture
async def pool(tmp_path: Path) -> AsyncIterator[WorkerPool]:
    workers = WorkerPool(Settings(data_dir=tmp_path, memory={"enabled": False}), 1, max_runs=3)
    await workers.start()
    yield workers
    await workers.close()


async def test_events_value_and_errors_come_back(pool: WorkerPool, tmp_path: Path) -> None:
    seen: list[Any] = []
    pid, data_dir = await pool.call(partial(numbered, count=500), seen.append)
    assert seen == list(range(500))
    assert pid in pool.pids and pid != os.getpid() and data_dir == str(tmp_path)
    with pytest.raises(NoData) as typed:
        await pool.call(no_data)
    assert typed.value.suggestions == ["ZZZ"]  # the same exception, with what it carries
    with pytest.raises(RuntimeError, match=r"_Unpicklable: the tool broke \(7\)"):
        await pool.call(odd_error)


async def test_concurrent_jobs_events_each_arrive_whole_and_in_order(pool: WorkerPool) -> None:
    seen: dict[str, list[Any]] = {name: [] for name in "abc"}
    await asyncio.gather(
        *(pool.call(partial(interleaved, name=n, count=300), seen[n].append) for n in seen)
    )
    for name, events in seen.items():
        assert events == [(name, i) for i in range(300)]


async def test_an_event_pickle_cannot_carry_is_lost_alone(pool: WorkerPool) -> None:
    seen: list[Any] = []
    await pool.call(with_a_lock, seen.append)
    assert seen == [1, 2]


async def test_a_worker_runs_below_the_servers_priority(pool: WorkerPool) -> None:
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    assert await pool.call(niceness) == min(19, ours + 5)


async def test_a_worker_is_replaced_after_max_runs(pool: WorkerPool) -> None:
    first = [(await pool.call(partial(numbered, count=0)))[0] for _ in range(3)]
    assert len(set(first)) == 1
    fourth, _ = await pool.call(partial(numbered, count=0))
    assert fourth != first[0]
    deadline = time.monotonic() + 120  # margin: it exits in a second when the machine is idle
    while _alive(first[0]):  # the retired worker exits once its runs are over
        assert time.monotonic() < deadline, "the retired worker did not exit"
        await asyncio.sleep(0.1)


async def test_cancelling_the_caller_cancels_the_job(pool: WorkerPool, tmp_path: Path) -> None:
    flag = tmp_path / "flag"
    started = asyncio.Event()
    task = asyncio.create_task(pool.call(partial(forever, flag=str(flag)), lambda _: started.set()))
    await asyncio.wait_for(started.wait(), 60)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert flag.read_text() == "cancelled"  # the worker's job saw it before the call ended


async def test_a_worker_never_writes_to_the_servers_stdout(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    workers = WorkerPool(Settings(data_dir=tmp_path, memory={"enabled": False}), 1)
    await workers.start()  # after capfd took this process's stdout: the worker inherits it
    try:
        await workers.call(partial(chatty, said="a library's print"))
    finally:
        await workers.close()
    out, err = capfd.readouterr()
    assert "a library's print" not in out  # an MCP client over stdio would choke on it
    assert "a library's print\n" in err and "a library's print raw\n" in err


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status").read_text()
    return "zombie" not in status


async def test_a_cancel_right_behind_its_run_cancels_it(pool: WorkerPool, tmp_path: Path) -> None:
    busy = asyncio.create_task(pool.call(partial(blocking, seconds=1.0)))
    await asyncio.sleep(0.3)  # the worker's loop is held: the next two messages wait together
    flag = tmp_path / "flag"
    task = asyncio.create_task(pool.call(partial(forever, flag=str(flag))))
    await asyncio.sleep(0.05)  # its run is sent
    task.cancel()  # and its cancel right behind
    with pytest.raises(asyncio.CancelledError):
        await task
    await busy
    assert not flag.exists()  # cancelled before it began
    assert await pool.call(jobs_running) == 0  # not left running forever in the worker

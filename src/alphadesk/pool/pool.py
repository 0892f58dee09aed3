"""Where a server's pipeline runs execute: in worker processes (:class:`WorkerPool`), so one
client's CPU work never stalls another's stream, or in this process (:class:`InProcess`,
for tests and embedding). Both answer ``await runs.call(job, on_event)`` and
``await runs.run(kind, request, on_event)``; cancelling the awaiting task cancels the run,
which records itself interrupted.

The pool starts ``workers`` processes (spawned: a server's threads are not forked) and
sends each job to the least busy one. A thread per worker reads its pipe and hands each
message to the event loop as it arrives, so events stream with no polling. A worker that
dies takes its runs with it: each is recorded interrupted with the reason, its caller gets
:class:`WorkerDied`, and a new worker takes the dead one's place. A worker is retired
after ``max_runs`` jobs (it finishes those it has, then exits; a fresh one replaces it),
which bounds whatever a long-lived process accumulates.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import pickle
import signal
import threading
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import partial
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from alphadesk.agent.events import EventSink
from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.base import MarketData
from alphadesk.pool.child import MarketFactory, worker_main
from alphadesk.pool.jobs import Job, WorkerEnv, run_pipeline, sendable, warm_up
from alphadesk.store import RunStore

__all__ = ["InProcess", "Runs", "WorkerDied", "WorkerPool", "default_workers"]

logger = logging.getLogger(__name__)

_START_TIMEOUT_S = 120.0  # a worker imports every pipeline before it says ready
_CANCEL_GRACE_S = 30.0  # how long a cancelled call waits for its run to record itself


class WorkerDied(RuntimeError):
    """The worker process running a job exited before the job ended.

    Attributes:
        pid: That worker's process id (None: the pool stopped it on its way down).
    """

    def __init__(self, reason: str, pid: int | None = None) -> None:
        super().__init__(reason)
        self.pid = pid


def default_workers() -> int:
    """One worker per core this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class Runs(ABC):
    """Where jobs run: ``call`` runs one; ``run`` runs one recorded pipeline run."""

    @abstractmethod
    async def call(self, job: Job, on_event: EventSink | None = None) -> Any:
        """Run ``job``, its events to ``on_event``; its result, or its error raised."""

    async def run(
        self,
        kind: str,
        request: Any,
        on_event: EventSink | None = None,
        *,
        model: str | None = None,
        run_id: str | None = None,
    ) -> Any:
        """A run of the pipeline of ``kind`` on ``request`` (under ``run_id`` when given);
        its result, or None when it stopped at a checkpoint."""
        job = partial(run_pipeline, kind=kind, request=request, model=model, run_id=run_id)
        return await self.call(job, on_event)


class InProcess(Runs):
    """Jobs run on the caller's event loop, in this process (the CLI's and tests' path)."""

    def __init__(self, settings: Settings, market: MarketData) -> None:
        self.env = WorkerEnv(settings=settings, market=market)

    async def call(self, job: Job, on_event: EventSink | None = None) -> Any:
        return await job(self.env, on_event or _ignore)


@dataclass
class _Call:
    on_event: EventSink
    future: asyncio.Future[Any]
    run_ids: set[str] = field(default_factory=set)  # the runs its events came from
    cancelling: bool = False


@dataclass
class _Worker:
    process: BaseProcess
    conn: Connection
    ready: asyncio.Future[None]
    calls: dict[str, _Call] = field(default_factory=dict)
    taken: int = 0  # jobs sent so far
    retiring: bool = False

    def send(self, message: tuple[Any, ...]) -> None:
        with contextlib.suppress(OSError):  # a dead worker: its reader reports it
            self.conn.send(message)


class WorkerPool(Runs):
    """``workers`` processes running jobs for this event loop.

    Args:
        settings: Passed to every worker (its runs record into the same store).
        workers: How many processes (at least 1).
        max_runs: Jobs a worker takes before it is replaced.
        market: Builds each worker's market from the settings (a module-level function).

    Raises:
        ValueError: ``workers`` or ``max_runs`` below 1.
    """

    def __init__(
        self,
        settings: Settings,
        workers: int,
        *,
        max_runs: int = 200,
        market: MarketFactory = build_provider,
    ) -> None:
        if workers < 1:
            raise ValueError(f"a worker pool needs at least 1 worker, not {workers}")
        if max_runs < 1:
            raise ValueError(f"a worker takes at least 1 run before it is replaced, not {max_runs}")
        self.settings, self.size, self.max_runs = sendable(settings), workers, max_runs
        self._market = market
        self._workers: list[_Worker] = []
        self._context = multiprocessing.get_context("spawn")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    @property
    def pids(self) -> list[int]:
        """The live workers' process ids."""
        return [w.process.pid for w in self._workers if w.process.pid is not None]

    def worker_of(self, run_id: str) -> int | None:
        """The process id of the worker running ``run_id`` (once its first event came)."""
        for worker in self._workers:
            if any(run_id in call.run_ids for call in worker.calls.values()):
                return worker.process.pid
        return None

    async def start(self) -> None:
        """Start the workers and wait until each is ready.

        Raises:
            RuntimeError: a worker failed to start (its error is in the log).
        """
        self._loop = asyncio.get_running_loop()
        started = [self._spawn() for _ in range(self.size)]
        await asyncio.to_thread(warm_up)  # this process checks requests with the calendar
        await asyncio.wait_for(asyncio.gather(*(w.ready for w in started)), _START_TIMEOUT_S)

    async def close(self) -> None:
        """Stop every worker: runs still going are cancelled and recorded interrupted."""
        self._closed = True
        workers, self._workers = self._workers, []
        for worker in workers:
            worker.send(("stop",))
        await asyncio.gather(*(asyncio.to_thread(_reap, w.process) for w in workers))

    async def call(self, job: Job, on_event: EventSink | None = None) -> Any:
        """Run ``job`` in a worker; ``on_event`` sees its events, in order, on this loop.

        Raises:
            WorkerDied: the worker exited (killed, crashed) before the job ended.
            RuntimeError: the pool is closed or not started.
        """
        worker = self._pick()
        job_id = uuid.uuid4().hex
        assert self._loop is not None
        call = _Call(on_event or _ignore, self._loop.create_future())
        worker.calls[job_id] = call
        worker.taken += 1
        if worker.taken >= self.max_runs:
            self._retire(worker)
        worker.send(("run", job_id, job))
        try:
            return await asyncio.shield(call.future)
        except asyncio.CancelledError:
            if not call.future.done():  # we were cancelled: so is the run, which records it
                call.cancelling = True
                worker.send(("cancel", job_id))
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(call.future, _CANCEL_GRACE_S)
            raise

    def _pick(self) -> _Worker:
        if self._loop is None or self._closed:
            raise RuntimeError("the worker pool is not running")
        live = [w for w in self._workers if not w.retiring]
        return min(live, key=lambda w: len(w.calls)) if live else self._spawn()

    def _spawn(self) -> _Worker:
        assert self._loop is not None
        ours, theirs = self._context.Pipe(duplex=True)
        process = self._context.Process(
            target=worker_main, args=(theirs, self.settings, self._market),
            name="alphadesk-worker", daemon=True,
        )  # fmt: skip
        process.start()
        theirs.close()  # the worker holds the only other end: its exit closes the pipe
        worker = _Worker(process, ours, self._loop.create_future())
        self._workers.append(worker)
        threading.Thread(target=self._read, args=(worker,), daemon=True,
                         name=f"worker-{process.pid}-reader").start()  # fmt: skip
        return worker

    def _retire(self, worker: _Worker) -> None:
        """No new jobs for ``worker``; it stops once its last one ends."""
        worker.retiring = True
        if not self._closed and len([w for w in self._workers if not w.retiring]) < self.size:
            self._spawn()
        if not worker.calls:
            worker.send(("stop",))

    def _read(self, worker: _Worker) -> None:
        """The worker's messages, onto the loop as they come; its exit once the pipe closes."""
        assert self._loop is not None
        while True:
            try:
                payload = worker.conn.recv_bytes()
            except (EOFError, OSError):
                break
            try:
                message = pickle.loads(payload)
            except Exception:  # a class this process cannot load: lose that one message
                logger.exception("a message from worker %s could not be read", worker.process.pid)
                continue
            self._loop.call_soon_threadsafe(self._deliver, worker, message)
        _reap(worker.process)
        with contextlib.suppress(RuntimeError):  # the loop is closed: the server has stopped
            self._loop.call_soon_threadsafe(self._lost, worker)

    def _deliver(self, worker: _Worker, message: tuple[str, str | None, Any]) -> None:
        tag, job_id, value = message
        if tag == "ready":
            if not worker.ready.done():
                worker.ready.set_result(None)
            return
        if tag == "events":
            for of_job, event in value:
                if (to := worker.calls.get(of_job)) is not None:
                    _pass_on(to, event)
            return
        call = worker.calls.get(job_id or "")
        if call is None:
            return
        del worker.calls[job_id or ""]
        if worker.retiring and not worker.calls:
            worker.send(("stop",))
        if call.future.done():
            return
        if tag == "done":
            call.future.set_result(value)
        elif tag == "failed":
            call.future.set_exception(value)
        elif call.cancelling:
            call.future.cancel()
        else:
            call.future.set_exception(WorkerDied("the worker stopped: the server is shutting down"))

    def _lost(self, worker: _Worker) -> None:
        """The worker exited: its unfinished runs are recorded interrupted, and replaced."""
        if worker in self._workers:
            self._workers.remove(worker)
        if not worker.ready.done():
            worker.ready.set_exception(
                RuntimeError(f"a worker process failed to start ({_exit(worker.process)})")
            )
        if not worker.calls:
            return
        reason = f"the worker process running it died ({_exit(worker.process)})"
        logger.error("%s; %d job(s) lost", reason, len(worker.calls))
        store = RunStore(self.settings.store_path)
        for call in worker.calls.values():
            for run_id in call.run_ids:
                _interrupt(store, run_id, reason)
            if not call.future.done():
                call.future.set_exception(WorkerDied(reason, worker.process.pid))
        worker.calls.clear()
        if not self._closed and len([w for w in self._workers if not w.retiring]) < self.size:
            self._spawn()


def _pass_on(call: _Call, event: Any) -> None:
    if isinstance(run_id := getattr(event, "run_id", None), str):
        call.run_ids.add(run_id)
    call.on_event(event)


def _interrupt(store: RunStore, run_id: str, reason: str) -> None:
    """Record ``run_id`` interrupted with ``reason``, unless it ended (its writer is gone:
    a reader would only guess that its process ended)."""
    try:
        run = store.get(run_id)
        if run.finished_at is None:
            resume = run.model_copy(update={"status": "interrupted"}).resume_command
            why = f"{reason}; continue it with `{resume}`" if resume else reason
            store.finish(run_id, status="interrupted", error=why)
    except Exception:  # the store is unreachable: the reader's guess stands
        logger.exception("could not record run %s interrupted", run_id)


def _exit(process: BaseProcess) -> str:
    code = process.exitcode
    if code is None:
        return "exit status unknown"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
    return f"exit status {code}"


def _reap(process: BaseProcess) -> None:
    process.join(timeout=30)
    if process.is_alive():
        process.kill()
        process.join(timeout=5)


def _ignore(_event: Any) -> None:
    return None

"""A worker process: an event loop of its own running the jobs its server sends, several at
once, each streaming its events back as they happen.

The server and the worker talk over one duplex pipe. In: ``("run", job_id, job)``,
``("cancel", job_id)``, ``("stop",)``. Out: ``("ready", None, None)`` once, then the jobs'
events as ``("events", None, [(job_id, event), ...])`` and per job one of
``("done", job_id, result)``, ``("failed", job_id, exception)`` or
``("cancelled", job_id, None)``, after its last event. The events a step of the loop emits
(a desk's agent emits several at a time) go in one message, sent as that step ends: one
pickle, one write and one wake-up of the server's loop for all of them. A pipe that closes
(the server went away) stops the worker like ``stop`` does: its runs are cancelled and
recorded interrupted.

The loop is a :class:`~alphadesk.pool.loop.StartFirstLoop`: a run that just arrived takes
its first steps ahead of the runs under way, so its first event is not held up by their
CPU work.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import gc
import logging
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.pool.heap import trim_heap
from alphadesk.pool.jobs import Job, WorkerEnv, warm_up
from alphadesk.pool.loop import StartFirstLoop, call_first, run_first

__all__ = ["MarketFactory", "worker_main"]

logger = logging.getLogger(__name__)

MarketFactory = Callable[[Settings], MarketData]

_NICENESS = 5  # a worker's scheduling priority below the server's (a third of its CPU share)


def worker_main(conn: Connection, settings: Settings, market: MarketFactory) -> None:
    """The process's entry point: build the environment, say ready, serve until stopped."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's; it stops us
    # The server's own process answers clients (a request checked and accepted, events
    # passed on) in a few milliseconds of CPU each, but when the workers' runs keep every
    # core busy it waited its turn behind them: it goes first, the runs take the rest.
    with contextlib.suppress(OSError):
        os.nice(_NICENESS)
    # Whatever a library prints goes to the server's log: the server's stdout, which the
    # worker inherits, may be a protocol stream (an MCP client reads it over stdio).
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    warm_up()
    env = WorkerEnv(settings=settings, market=market(settings))
    # What is alive now (modules, the calendar, the market) lives as long as the process:
    # the collector need not walk it again at every full collection.
    gc.collect()
    gc.freeze()
    with asyncio.Runner(loop_factory=StartFirstLoop) as runner:
        runner.run(_Worker(conn, env).serve())


class _Worker:
    def __init__(self, conn: Connection, env: WorkerEnv) -> None:
        self.conn, self.env = conn, env
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self._inbox: collections.deque[tuple[Any, ...] | None] = collections.deque()
        self._outbox: list[tuple[str, Any]] = []  # (job_id, event) not sent yet
        self._sending = threading.Lock()  # a sink may be called from a tool's thread
        self._loop: asyncio.AbstractEventLoop | None = None

    async def serve(self) -> None:
        self._loop = loop = asyncio.get_running_loop()
        self._stopping: asyncio.Future[None] = loop.create_future()
        threading.Thread(target=self._read, args=(loop,), daemon=True).start()
        self.send(("ready", None, None))
        await self._stopping
        for task in self.tasks.values():  # stopping: each run records its interruption
            task.cancel()
        await asyncio.gather(*self.tasks.values(), return_exceptions=True)

    def _read(self, loop: asyncio.AbstractEventLoop) -> None:
        """The server's messages, handled on the loop in the order they came as soon as the
        current step ends. Callbacks from threads go first, the latest ahead of the others,
        so each wakes one drain of the inbox rather than carrying its own message: a
        ``cancel`` right behind its ``run`` must not be handled before it."""
        while True:
            try:
                message = self.conn.recv()
            except (EOFError, OSError):  # the server is gone
                message = None
            self._inbox.append(message)
            loop.call_soon_threadsafe(self._drain)
            if message is None or message[0] == "stop":
                return

    def _drain(self) -> None:
        while self._inbox:
            self._handle(self._inbox.popleft())

    def _handle(self, message: tuple[Any, ...] | None) -> None:
        if message is None or message[0] == "stop":
            if not self._stopping.done():
                self._stopping.set_result(None)
        elif message[0] == "run":
            self._start(message[1], message[2])
        elif message[0] == "cancel" and message[1] in self.tasks:
            self.tasks[message[1]].cancel()

    def _start(self, job_id: str, job: Job) -> None:
        """The job as a task whose steps go first until its first event."""
        context = contextvars.copy_context()
        started = context.run(run_first)
        task = asyncio.create_task(self._run(job_id, job, started), context=context)
        self.tasks[job_id] = task
        task.add_done_callback(lambda ended: self._ended(job_id, ended))

    def _ended(self, job_id: str, task: asyncio.Task[None]) -> None:
        self.tasks.pop(job_id, None)
        if task.cancelled():  # cancelled before its first step: ``_run`` never ran to say so
            self.send(("cancelled", job_id, None))
        if not self.tasks:  # idle: give the runs' freed heap back
            trim_heap()

    async def _run(self, job_id: str, job: Job, started: Callable[[], None]) -> None:
        def emit(event: Any) -> None:
            started()
            self._queue_event(job_id, event)

        try:
            result = await job(self.env, emit)
        except asyncio.CancelledError:
            self.send(("cancelled", job_id, None))
            return
        except Exception as exc:
            self.send(("failed", job_id, _portable(exc)))
            return
        self.send(("done", job_id, result))

    def _queue_event(self, job_id: str, event: Any) -> None:
        """``event`` into the outbox, sent with the others once the current step ends."""
        with self._sending:
            self._outbox.append((job_id, event))
            if len(self._outbox) > 1:  # a send is already on its way
                return
        assert self._loop is not None
        try:
            on_loop = asyncio.get_running_loop() is self._loop
        except RuntimeError:  # a tool's thread
            on_loop = False
        if on_loop:
            call_first(self._flush)
        else:
            self._loop.call_soon_threadsafe(self._flush)

    def _flush(self) -> None:
        with self._sending:
            self._send_events()

    def send(self, message: tuple[str, str | None, Any]) -> None:
        """``message`` to the server, after every event still in the outbox."""
        with self._sending:
            self._send_events()
            try:
                payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as exc:  # a value pickle cannot carry: say so instead
                logger.exception("cannot send a %s message of job %s", message[0], message[1])
                payload = pickle.dumps(("failed", message[1], _portable(exc)))
            self._write(payload)

    def _send_events(self) -> None:
        """The outbox's events in one message (the lock held)."""
        if not self._outbox:
            return
        events, self._outbox = self._outbox, []
        try:
            payload = pickle.dumps(("events", None, events), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # one event pickle cannot carry: the others go, it is lost
            kept = [e for e in events if _sendable(*e)]
            payload = pickle.dumps(("events", None, kept), protocol=pickle.HIGHEST_PROTOCOL)
        self._write(payload)

    def _write(self, payload: bytes) -> None:
        with contextlib.suppress(OSError):  # a closed pipe: the server left
            self.conn.send_bytes(payload)


def _sendable(job_id: str, event: Any) -> bool:
    try:
        pickle.dumps(event, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        logger.exception("cannot send an event of job %s", job_id)
        return False
    return True


def _portable(exc: BaseException) -> BaseException:
    """``exc`` itself when it survives pickling (the server maps its type to an HTTP error),
    else a RuntimeError that names it."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc

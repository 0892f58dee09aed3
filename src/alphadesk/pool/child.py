"""A worker process: an event loop of its own running the jobs its server sends, several at
once, each streaming its events back as they happen.

The server and the worker talk over one duplex pipe. In: ``("run", job_id, job)``,
``("cancel", job_id)``, ``("stop",)``. Out: ``("ready", pid)`` once, then per job its
``("event", job_id, event)`` messages and one of ``("done", job_id, result)``,
``("failed", job_id, exception)`` or ``("cancelled", job_id, None)``. A pipe that closes
(the server went away) stops the worker like ``stop`` does: its runs are cancelled and
recorded interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
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
from alphadesk.pool.jobs import Job, WorkerEnv, warm_up
from alphadesk.pool.memory import release_freed_memory

__all__ = ["MarketFactory", "worker_main"]

logger = logging.getLogger(__name__)

MarketFactory = Callable[[Settings], MarketData]


def worker_main(conn: Connection, settings: Settings, market: MarketFactory) -> None:
    """The process's entry point: build the environment, say ready, serve until stopped."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's; it stops us
    # Whatever a library prints goes to the server's log: the server's stdout, which the
    # worker inherits, may be a protocol stream (an MCP client reads it over stdio).
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    warm_up()
    env = WorkerEnv(settings=settings, market=market(settings))
    asyncio.run(_Worker(conn, env).serve())


class _Worker:
    def __init__(self, conn: Connection, env: WorkerEnv) -> None:
        self.conn, self.env = conn, env
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self._sending = threading.Lock()  # a sink may be called from a tool's thread

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        inbox: asyncio.Queue[tuple[Any, ...] | None] = asyncio.Queue()
        threading.Thread(target=self._read, args=(loop, inbox), daemon=True).start()
        self.send(("ready", None, None))
        while (message := await inbox.get()) is not None:
            if message[0] == "run":
                self._start(message[1], message[2])
            elif message[0] == "cancel" and message[1] in self.tasks:
                self.tasks[message[1]].cancel()
            elif message[0] == "stop":
                break
        for task in self.tasks.values():  # stopping: each run records its interruption
            task.cancel()
        await asyncio.gather(*self.tasks.values(), return_exceptions=True)

    def _read(self, loop: asyncio.AbstractEventLoop, inbox: asyncio.Queue[Any]) -> None:
        while True:
            try:
                message = self.conn.recv()
            except (EOFError, OSError):  # the server is gone
                message = None
            loop.call_soon_threadsafe(inbox.put_nowait, message)
            if message is None or message[0] == "stop":
                return

    def _start(self, job_id: str, job: Job) -> None:
        task = asyncio.create_task(self._run(job_id, job))
        self.tasks[job_id] = task
        task.add_done_callback(lambda _: self._ended(job_id))

    def _ended(self, job_id: str) -> None:
        self.tasks.pop(job_id, None)
        if not self.tasks:  # idle: give the runs' freed heap back
            release_freed_memory()

    async def _run(self, job_id: str, job: Job) -> None:
        try:
            result = await job(self.env, lambda event: self.send(("event", job_id, event)))
        except asyncio.CancelledError:
            self.send(("cancelled", job_id, None))
            return
        except Exception as exc:
            self.send(("failed", job_id, _portable(exc)))
            return
        self.send(("done", job_id, result))

    def send(self, message: tuple[str, str | None, Any]) -> None:
        try:
            payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # a value pickle cannot carry: say so instead
            logger.exception("cannot send a %s message of job %s", message[0], message[1])
            if message[0] == "event":
                return
            payload = pickle.dumps(("failed", message[1], _portable(exc)))
        with self._sending, contextlib.suppress(OSError):  # a closed pipe: the server left
            self.conn.send_bytes(payload)


def _portable(exc: BaseException) -> BaseException:
    """``exc`` itself when it survives pickling (the server maps its type to an HTTP error),
    else a RuntimeError that names it."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc

"""The worker's event loop: a run marked as starting takes its steps ahead of the runs under
way (on a plain loop it waits a round of theirs at every step), a callback from a thread
goes ahead of the waiting steps, and ``call_first`` runs right after the current step."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import pytest

from alphadesk.pool.loop import StartFirstLoop, call_first, run_first

BUSY, STEPS = 20, 10


async def _busy(log: list[str], name: str, stop: asyncio.Event) -> None:
    while not stop.is_set():
        log.append(name)
        await asyncio.sleep(0)


async def _starting(log: list[str], mark: bool) -> None:
    started = run_first() if mark else None
    for _ in range(STEPS):
        log.append("new")
        await asyncio.sleep(0)
    if started is not None:
        started()


async def _a_new_run_among_busy_ones(mark: bool) -> list[str]:
    """The steps taken while a new run takes its ten: its own and the busy runs'."""
    log: list[str] = []
    stop = asyncio.Event()
    busy = [asyncio.create_task(_busy(log, f"busy{i}", stop)) for i in range(BUSY)]
    await asyncio.sleep(0.01)  # the busy runs are under way
    await asyncio.create_task(_starting(log, mark))
    stop.set()
    await asyncio.gather(*busy)
    first = log.index("new")
    last = len(log) - 1 - log[::-1].index("new")
    return log[first : last + 1]


def _run(main: Callable[[], object], loop: asyncio.AbstractEventLoop) -> object:
    try:
        return loop.run_until_complete(main())  # type: ignore[arg-type]
    finally:
        loop.close()


def test_a_starting_run_takes_its_steps_before_the_busy_ones() -> None:
    steps = _run(lambda: _a_new_run_among_busy_ones(mark=True), StartFirstLoop())
    assert steps == ["new"] * STEPS


def test_unmarked_or_on_a_plain_loop_it_waits_a_round_at_every_step() -> None:
    unmarked = _run(lambda: _a_new_run_among_busy_ones(mark=False), StartFirstLoop())
    plain = _run(lambda: _a_new_run_among_busy_ones(mark=True), asyncio.new_event_loop())
    for steps in (unmarked, plain):
        assert steps.count("new") == STEPS
        assert len(steps) >= STEPS + (STEPS - 1) * BUSY  # every busy run between two steps


def test_the_mark_ends_when_its_function_is_called() -> None:
    async def main() -> list[str]:
        log: list[str] = []
        stop = asyncio.Event()
        busy = [asyncio.create_task(_busy(log, f"busy{i}", stop)) for i in range(BUSY)]
        await asyncio.sleep(0.01)

        async def marked_then_not() -> None:
            run_first()()  # marked, and at once no longer
            for _ in range(3):
                log.append("new")
                await asyncio.sleep(0)

        await asyncio.create_task(marked_then_not())
        stop.set()
        await asyncio.gather(*busy)
        return log[log.index("new") :]

    steps = _run(main, StartFirstLoop())
    assert len(steps[: steps.index("new", steps.index("new") + 1)]) > BUSY


def test_the_tasks_a_starting_run_starts_go_first_too() -> None:
    async def main() -> list[str]:
        log: list[str] = []
        stop = asyncio.Event()
        busy = [asyncio.create_task(_busy(log, f"busy{i}", stop)) for i in range(BUSY)]
        await asyncio.sleep(0.01)

        async def fan_out() -> None:
            started = run_first()
            await asyncio.gather(*(_starting(log, mark=False) for _ in range(3)))
            started()

        await asyncio.create_task(fan_out())
        stop.set()
        await asyncio.gather(*busy)
        first = log.index("new")
        return log[first : len(log) - log[::-1].index("new")]

    assert _run(main, StartFirstLoop()) == ["new"] * (3 * STEPS)


def test_a_threads_callback_goes_ahead_of_the_waiting_steps() -> None:
    async def main() -> list[str]:
        log: list[str] = []
        stop = asyncio.Event()
        busy = [asyncio.create_task(_busy(log, f"busy{i}", stop)) for i in range(BUSY)]
        await asyncio.sleep(0.01)
        loop = asyncio.get_running_loop()
        done = threading.Event()

        def from_thread() -> None:
            loop.call_soon_threadsafe(log.append, "thread")
            done.set()

        # The thread queues its callback while a busy step runs: every other busy step is
        # already waiting, and the callback still comes right after this one.
        log.append("queued")
        threading.Thread(target=from_thread).start()
        done.wait(5)
        await asyncio.sleep(0)
        stop.set()
        await asyncio.gather(*busy)
        return log[log.index("queued") : log.index("thread") + 1]

    assert _run(main, StartFirstLoop()) == ["queued", "thread"]


@pytest.mark.parametrize("first", [True, False])
def test_call_first_runs_right_after_the_current_step(first: bool) -> None:
    async def main() -> list[str]:
        log: list[str] = []
        stop = asyncio.Event()
        busy = [asyncio.create_task(_busy(log, f"busy{i}", stop)) for i in range(BUSY)]
        await asyncio.sleep(0.01)
        log.append("now")
        call_first(lambda: log.append("next"))
        await asyncio.sleep(0)
        stop.set()
        await asyncio.gather(*busy)
        return log[log.index("now") : log.index("next") + 1]

    loop = StartFirstLoop() if first else asyncio.new_event_loop()
    steps = _run(main, loop)
    if first:
        assert steps == ["now", "next"]
    else:  # elsewhere it waits its turn
        assert len(steps) > BUSY

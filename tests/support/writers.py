"""Processes that write runs, events and cache entries into one store at the same moment:
the concurrency test and bench/chaos.py start the same ones."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

__all__ = ["start_writers"]

_WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from alphadesk.agent.events import RunFinished, RunStarted
    from alphadesk.llm.cache import ResponseCache
    from alphadesk.llm.messages import AssistantMessage, ModelResponse, Usage
    from alphadesk.store import RunStore
    from datetime import UTC, datetime, timedelta

    path, go, me = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    runs, events, entries = (int(v) for v in sys.argv[4:7])
    while not go.exists():  # start together, to collide as much as possible
        time.sleep(0.005)
    store, cache = RunStore(path), ResponseCache(path)
    as_of = datetime(2024, 11, 29, 21, tzinfo=UTC)
    for i in range(runs):
        run_id = store.start(kind="k", title=f"{me}-{i}", request={"i": i}, run_id=f"{me}-{i}")
        writer = store.writer(run_id)
        for j in range(events):  # a boundary every other event: several flushes per run
            if j % 2:
                writer.event(RunFinished(run_id=run_id, agent=f"a{j}", outcome="completed"))
            else:
                writer.event(RunStarted(run_id=run_id, agent=f"a{j}", model="m", as_of=as_of,
                                        tools=[]))
        writer.close()
        store.finish(run_id, status="completed", result={"i": i})
    for k in range(entries):
        response = ModelResponse(
            message=AssistantMessage(content=f"{me} {k}"), model="m", usage=Usage()
        )
        cache.put(f"{me}-{k}", "m", response)
    print("done")
    """
)


def start_writers(
    path: Path, go: Path, count: int, runs: int, events: int, entries: int
) -> list[subprocess.Popen[str]]:
    """``count`` writer processes on ``path``, each waiting for the file ``go`` to appear;
    each prints ``done`` when it has written ``runs`` runs of ``events`` events and
    ``entries`` cache entries."""
    arguments = [str(path), str(go)]
    counts = [str(runs), str(events), str(entries)]
    return [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, *arguments, f"w{n}", *counts],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(count)
    ]

"""Work in other processes of this machine, the one local worker mechanism.

- :mod:`.pool` — a server's pipeline runs off its event loop: long-lived worker processes
  behind one small interface (``await runs.run(kind, request, on_event)``), or this
  process (:class:`InProcess`).
- :mod:`.batches` — a screen's and an evaluation's batches over worker processes, or over
  a Ray cluster's actors (its distributed back end; Temporal, in ``durable/``, is the
  other, for runs that must survive a crash).

:mod:`.batches` and :mod:`.processes` import nothing of the pipelines, so the pipelines
that spread their work may use them; the names below load when first read.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from alphadesk.pool.jobs import Job, WorkerEnv, run_pipeline
    from alphadesk.pool.pool import InProcess, Runs, WorkerDied, WorkerPool, default_workers

__all__ = [
    "InProcess",
    "Job",
    "Runs",
    "WorkerDied",
    "WorkerEnv",
    "WorkerPool",
    "default_workers",
    "run_pipeline",
]

_FROM = {
    "InProcess": "pool",
    "Job": "jobs",
    "Runs": "pool",
    "WorkerDied": "pool",
    "WorkerEnv": "jobs",
    "WorkerPool": "pool",
    "default_workers": "pool",
    "run_pipeline": "jobs",
}


def __getattr__(name: str) -> Any:
    if name not in _FROM:
        raise AttributeError(f"module 'alphadesk.pool' has no attribute {name!r}")
    return getattr(import_module(f"alphadesk.pool.{_FROM[name]}"), name)

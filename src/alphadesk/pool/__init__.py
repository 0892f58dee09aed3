"""Running pipelines off a server's event loop: a pool of worker processes, or this
process, behind one small interface (``await runs.run(kind, request, on_event)``)."""

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

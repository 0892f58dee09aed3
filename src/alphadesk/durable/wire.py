"""What crosses the wire between a Temporal client, the workflow and the workers: plain
dataclasses of JSON (the run's request and graph state are JSON already)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["DEFAULT_QUEUE", "NodeCall", "Timeouts", "WorkflowInput", "workflow_id"]

DEFAULT_QUEUE = "alphadesk"


def workflow_id(run_id: str) -> str:
    """The workflow a run is recorded under: its id is known before anything runs."""
    return f"alphadesk-{run_id}"


@dataclass(frozen=True)
class Timeouts:
    """How long the workflow waits on a worker, in seconds.

    ``heartbeat`` is how soon a silent node counts as lost (its worker heartbeats every
    third of it while the node runs, and at each model turn and tool call); ``pickup`` how
    long a node may wait for the worker that holds the run before the run moves to another
    worker; ``node`` is the most one node may take, retries included.
    """

    heartbeat: float = 30.0
    pickup: float = 30.0
    node: float = 3600.0


@dataclass(frozen=True)
class WorkflowInput:
    """The workflow's input, one pipeline run: the pipeline kind (``csp``, ``desk``,
    ``algo``...), its request as JSON, the run id it is recorded under, the model override
    and whether the report gets its charts."""

    kind: str
    request: dict[str, Any]
    run_id: str
    model: str | None = None
    charts: bool = True
    timeouts: Timeouts = field(default_factory=Timeouts)


@dataclass(frozen=True)
class NodeCall:
    """One graph node to run for ``job`` on ``state``."""

    job: WorkflowInput
    node: str
    state: dict[str, Any]

"""``alphadesk worker``: a Temporal worker that runs pipeline workflows and their nodes.

Each worker polls the shared queue (workflows, and taking runs on) and a queue of its own
(the nodes of the runs it holds). Start as many as you like, on as many machines as share
the data folder (``ALPHADESK_DATA_DIR``) where runs, ledgers and caches are recorded.
"""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.durable.activities import PipelineActivities
from alphadesk.durable.server import connect
from alphadesk.durable.wire import DEFAULT_QUEUE
from alphadesk.durable.workflow import PipelineWorkflow

__all__ = ["run_worker"]


# Modules the workflow sandbox shares with the worker instead of re-importing them for every
# workflow: the graph library, the data libraries (importing them again can outlast the
# sandbox's deadlock timer on a busy machine), and our own code (the workflow calls only
# pure functions of it: request models and graph topologies).
_SHARED_MODULES = (
    "alphadesk",
    "langgraph",
    "langchain_core",
    "langsmith",
    "pydantic",
    "numpy",
    "pandas",
)


async def run_worker(
    settings: Settings,
    address: str,
    *,
    task_queue: str = DEFAULT_QUEUE,
    namespace: str = "default",
    ready: Callable[[str], None] | None = None,
) -> None:
    """Run a worker until cancelled; ``ready(own_queue)`` once it polls."""
    client = await connect(address, namespace)
    own_queue = f"{task_queue}@{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    activities = PipelineActivities(settings, build_provider(settings), own_queue)
    runner = SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules(*_SHARED_MODULES)
    )
    with ThreadPoolExecutor(max_workers=4) as executor:
        shared = Worker(
            client,
            task_queue=task_queue,
            workflows=[PipelineWorkflow],
            activities=[activities.claim_run, activities.fail_run],
            workflow_runner=runner,
            activity_executor=executor,
        )
        own = Worker(
            client,
            task_queue=own_queue,
            activities=[activities.run_node, activities.finish_run],
            activity_executor=executor,
        )
        async with shared, own:
            if ready is not None:
                ready(own_queue)
            await asyncio.Event().wait()

"""Durable pipeline runs on Temporal: a run survives the worker that was running it.

A pipeline's graph runs as a Temporal workflow (``workflow.py``) whose every node (an agent, or
a round of agents) is an activity on a worker (``activities.py``), heartbeating at every
model turn and tool call. When a worker dies, the workflow hands the run to another worker,
which carries on from the last completed node: completed activities are never redone, and
the interrupted node's answered model calls replay from the run's journal for free. The run
store and ledger are fed as in a local run. ``alphadesk worker`` runs a worker
(``worker.py``); ``alphadesk csp|desk ... --temporal ADDRESS`` and ``alphadesk serve
--temporal`` submit and follow a run through ``TemporalRuns`` (``runs.py``: the pool's
interface, the one way to send a run here); ``server.py`` starts the Temporal dev server
for local work and tests.

Temporal is an optional extra (``pip install 'alphadesk[temporal]'``), imported only here.
"""

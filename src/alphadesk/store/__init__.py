"""Persistence: the run store (SQLite)."""

from alphadesk.store.runs import Artifact, RunNotFound, RunRecord, RunStore, new_run_id

__all__ = ["Artifact", "RunNotFound", "RunRecord", "RunStore", "new_run_id"]

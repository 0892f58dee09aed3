"""The experiment tracker: every variant of every iteration, one JSON line each.

A line holds the run, the iteration, the variant's code hash, template and parameters,
its in-sample and out-of-sample metrics and scores, and the gate's decision. The file
loads with ``pandas.read_json(path, lines=True)`` (or :func:`load_experiments`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from alphadesk.pipelines.algo.models import VariantRecord

__all__ = ["ExperimentTracker", "load_experiments"]


class ExperimentTracker:
    """Appends variant records to a JSONL file."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def append(self, records: list[VariantRecord]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:
            for record in records:
                out.write(json.dumps(_row(record), default=str) + "\n")


def _row(record: VariantRecord) -> dict[str, Any]:
    row: dict[str, Any] = {
        "run_id": record.run_id,
        "iteration": record.iteration,
        "variant_id": record.variant_id,
        "name": record.name,
        "template": record.template,
        "approach": record.approach,
        "code_hash": record.code_hash,
        "parameters": record.parameters,
        "score": record.score,
        "passed": record.passed,
        "decision": record.decision,
        "error": record.error,
    }
    for period in (record.in_sample, record.out_of_sample):
        if period is None:
            continue
        prefix = "is" if period.period == "in_sample" else "oos"
        row[f"{prefix}_status"] = period.status
        row[f"{prefix}_score"] = period.score
        row[f"{prefix}_passed"] = period.passed
        for name, value in period.metrics.items():
            row[f"{prefix}_{name}"] = value
    return row


def load_experiments(path: Path) -> pd.DataFrame:
    """The tracker's lines as a frame, one row per variant."""
    return pd.read_json(path, lines=True)

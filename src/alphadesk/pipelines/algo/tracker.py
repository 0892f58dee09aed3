"""The experiment tracker: every variant of every iteration, one JSON line each.

A line holds the run, the iteration, the variant's code hash, template and parameters,
its in-sample and out-of-sample metrics and scores, the gate's decision, and the trial
figures over every variant so far (``trials``, ``deflated_sharpe``, ``pbo``). The file
loads with ``pandas.read_json(path, lines=True)`` (or :func:`load_experiments`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from alphadesk.pipelines.algo.models import TrialStats, VariantRecord

__all__ = ["ExperimentTracker", "load_experiments"]


class ExperimentTracker:
    """Appends variant records to a JSONL file."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def append(self, records: list[VariantRecord], trials: TrialStats | None = None) -> None:
        """One line per record; ``trials`` (the figures over every variant so far, this
        iteration's included) repeat on each line of the iteration."""
        cumulative = {} if trials is None else _cumulative(trials)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:
            for record in records:
                out.write(json.dumps(_row(record) | cumulative, default=str) + "\n")


def _cumulative(trials: TrialStats) -> dict[str, Any]:
    return {
        "trials": trials.trials,
        "best_so_far": trials.best_variant,
        "deflated_sharpe": trials.deflated_sharpe,
        "pbo": trials.pbo,
    }


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

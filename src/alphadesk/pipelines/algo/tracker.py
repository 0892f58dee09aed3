"""The experiment tracker: every variant of every iteration, one JSON line each.

A line holds the run, the iteration, the variant's code hash, template and parameters,
its in-sample (search) and out-of-sample (validation) metrics and scores, the gate's
decision, and the trial figures over every variant so far (``trials``, ``candidate``: the
iteration's best they are of, ``deflated_sharpe``, ``pbo``). After the search, one last
line (``period`` ``holdout``) holds the chosen variant's run on the holdout
(``holdout_*`` figures); the lab writes it once its loop has ended and never reads it. The
file loads with ``pandas.read_json(path, lines=True)`` (or :func:`load_experiments`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from alphadesk.pipelines.algo.models import (
    HoldoutRecord,
    PeriodScore,
    TrialStats,
    VariantRecord,
)

__all__ = ["ExperimentTracker", "load_experiments"]


class ExperimentTracker:
    """Appends variant records to a JSONL file."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def append(self, records: list[VariantRecord], trials: TrialStats | None = None) -> None:
        """One line per record; ``trials`` (the figures over every variant so far, this
        iteration's included) repeat on each line of the iteration."""
        cumulative = {} if trials is None else _cumulative(trials)
        self._write([_row(record) | cumulative for record in records])

    def append_holdout(self, chosen: VariantRecord, holdout: HoldoutRecord) -> None:
        """The chosen variant's holdout run, as the last line."""
        row: dict[str, Any] = {
            "run_id": chosen.run_id,
            "period": "holdout",
            "variant_id": chosen.variant_id,
            "name": chosen.name,
            "code_hash": chosen.code_hash,
            "holdout_start": holdout.start,
            "holdout_end": holdout.end,
        }
        if holdout.run is not None:
            row |= _figures("holdout", holdout.run)
        self._write([row])

    def _write(self, rows: list[dict[str, Any]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:
            for row in rows:
                out.write(json.dumps(row, default=str) + "\n")


def _cumulative(trials: TrialStats) -> dict[str, Any]:
    return {
        "trials": trials.trials,
        "candidate": trials.best_variant,
        "deflated_sharpe": trials.deflated_sharpe,
        "pbo": trials.pbo,
    }


def _row(record: VariantRecord) -> dict[str, Any]:
    row: dict[str, Any] = {
        "run_id": record.run_id,
        "period": "search",
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
        if period is not None:
            row |= _figures("is" if period.period == "in_sample" else "oos", period)
    return row


def _figures(prefix: str, period: PeriodScore) -> dict[str, Any]:
    row: dict[str, Any] = {
        f"{prefix}_status": period.status,
        f"{prefix}_score": period.score,
        f"{prefix}_passed": period.passed,
    }
    return row | {f"{prefix}_{name}": value for name, value in period.metrics.items()}


def load_experiments(path: Path) -> pd.DataFrame:
    """The tracker's lines as a frame, one row per variant."""
    return pd.read_json(path, lines=True)

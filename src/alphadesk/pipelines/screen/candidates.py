"""A screen's table of candidates: every symbol-date's outcome, one row each, as CSV and
Parquet."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from alphadesk.pipelines.csp.models import CspResult
from alphadesk.pipelines.screen.prefilter import ScreenCheck

__all__ = ["save_table"]

_COLUMNS = [
    *("as_of", "symbol", "passed", "filtered_because", "error", "trend", "hv", "iv", "iv_hv"),
    *("decision", "expiration", "strike", "dte", "premium", "delta", "weekly_roc"),
    *("annualized_roc", "reason", "run_id"),
]
# Each column's type, whatever the values: a column with nothing in it on this screen (no
# error, no selection) keeps the type readers expect.
_NUMBERS = ("hv", "iv", "iv_hv", "strike", "dte", "premium", "delta", "weekly_roc")
_TYPES = {
    column: "float64" if column in (*_NUMBERS, "annualized_roc") else "str"
    for column in _COLUMNS
    if column != "passed"
}


def save_table(
    run_dir: Path, outcomes: Sequence[tuple[datetime, ScreenCheck, CspResult | None]]
) -> list[Path]:
    """``candidates.csv`` and ``candidates.parquet``: one row per symbol and date."""
    import pandas as pd

    run_dir.mkdir(parents=True, exist_ok=True)
    rows = sorted((_row(*o) for o in outcomes), key=lambda r: (r["as_of"], r["symbol"]))
    frame = pd.DataFrame(rows, columns=_COLUMNS).astype(_TYPES)
    csv, parquet = run_dir / "candidates.csv", run_dir / "candidates.parquet"
    frame.to_csv(csv, index=False)
    frame.to_parquet(parquet, index=False)
    return [csv, parquet]


def _decision(check: ScreenCheck, result: CspResult | None) -> str:
    if result is not None:
        return result.decision
    return "error" if check.error is not None else "filtered"


def _row(day: datetime, check: ScreenCheck, result: CspResult | None) -> dict[str, Any]:
    position = result.synthesis.suggested_position if result and result.synthesis else None
    return {
        "as_of": day.date().isoformat(),
        "symbol": check.symbol,
        "passed": check.passed,
        "filtered_because": "; ".join(check.reasons) or None,
        "error": check.error,
        "trend": check.trend,
        "hv": check.hv,
        "iv": check.iv,
        "iv_hv": check.iv_hv,
        "decision": _decision(check, result),
        "expiration": position.expiration.isoformat() if position else None,
        "strike": position.strike if position else None,
        "dte": position.dte if position else None,
        "premium": position.premium if position else None,
        "delta": position.delta if position else None,
        "weekly_roc": position.weekly_roc if position else None,
        "annualized_roc": position.annualized_roc if position else None,
        "reason": result.reason if result else None,
        "run_id": result.run_id if result else None,
    }

"""Every variant the lab tried is a trial: how much of the best one's Sharpe survives them.

Counted cumulatively over the run: the number of trials (every variant, failed ones too),
the deflated Sharpe ratio of the best variant's out-of-sample returns given the trials'
Sharpe variance there, and PBO by CSCV over the full-window (in- then out-of-sample)
return series of the variants that completed. A figure that cannot be computed yet is
``None`` with a note saying why.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from alphadesk.analytics.errors import AnalyticsError
from alphadesk.analytics.overfitting import (
    deflated_sharpe_ratio,
    probability_of_backtest_overfitting,
    sharpe_moments,
)
from alphadesk.pipelines.algo.models import TrialBar, TrialStats, VariantRecord

__all__ = ["trial_refusal", "trial_stats", "trials_brief"]


def _oos(record: VariantRecord) -> list[float]:
    return record.out_of_sample.returns if record.out_of_sample else []


def _sharpe_variance(records: Sequence[VariantRecord]) -> float | None:
    """The variance of the trials' per-period out-of-sample Sharpe ratios (None: < 2)."""
    sharpes = []
    for record in records:
        try:
            sharpes.append(sharpe_moments(_oos(record)).sharpe)
        except AnalyticsError:
            continue
    return float(np.var(sharpes, ddof=1)) if len(sharpes) >= 2 else None


def _deflated(
    records: Sequence[VariantRecord], best: VariantRecord, notes: list[str]
) -> float | None:
    try:
        figure = deflated_sharpe_ratio(_oos(best), len(records), _sharpe_variance(records))
    except AnalyticsError as exc:
        notes.append(f"no deflated Sharpe ratio for {best.variant_id}: {exc}")
        return None
    return figure.probability


def _pbo(records: Sequence[VariantRecord], notes: list[str]) -> tuple[float | None, int]:
    series = [r.in_sample.returns + _oos(r) for r in records if r.in_sample.returns and _oos(r)]
    if not series:
        notes.append("no PBO: no variant completed both periods")
        return None, 0
    length = max(len(s) for s in series)
    series = [s for s in series if len(s) == length]  # all cover the same window
    try:
        figure = probability_of_backtest_overfitting(np.column_stack(series)).probability
    except AnalyticsError as exc:
        notes.append(f"no PBO: {exc}")
        return None, len(series)
    return figure, len(series)


def trial_stats(records: Sequence[VariantRecord], best: VariantRecord | None) -> TrialStats:
    """The figures over ``records`` (every variant so far) for the ``best`` one."""
    notes: list[str] = []
    deflated = _deflated(records, best, notes) if best is not None else None
    pbo, pbo_trials = _pbo(records, notes)
    return TrialStats(
        trials=len(records),
        best_variant=best.variant_id if best else None,
        deflated_sharpe=None if deflated is None else round(deflated, 4),
        pbo=None if pbo is None else round(pbo, 4),
        pbo_trials=pbo_trials,
        notes=notes,
    )


def trial_refusal(stats: TrialStats, bar: TrialBar) -> str | None:
    """Why the figures refuse ``stats.best_variant`` for SUCCESS (None: they accept it). A
    figure that could not be computed refuses too: nothing shows the result is no luck."""
    why = []
    dsr, pbo, n = stats.deflated_sharpe, stats.pbo, stats.trials
    if dsr is None:
        why.append("no deflated Sharpe ratio could be computed")
    elif dsr <= bar.min_deflated_sharpe:
        why.append(
            f"its deflated Sharpe ratio {dsr:.1%} after {n} trials is not above "
            f"{bar.min_deflated_sharpe:.0%}"
        )
    if pbo is None:
        why.append("no PBO could be computed")
    elif pbo >= bar.max_pbo:
        why.append(
            f"the probability of backtest overfitting {pbo:.1%} is not below {bar.max_pbo:.0%}"
        )
    if not why:
        return None
    notes = f" ({'; '.join(stats.notes)})" if stats.notes and (dsr is None or pbo is None) else ""
    return " and ".join(why) + notes


def trials_brief(stats: TrialStats, bar: TrialBar, refusal: str | None) -> dict[str, object]:
    """The figures as the failure analyst and the gate read them."""
    return {
        "trials": stats.trials,
        "candidate": stats.best_variant,
        "deflated_sharpe": stats.deflated_sharpe,
        "pbo": stats.pbo,
        "min_deflated_sharpe": bar.min_deflated_sharpe,
        "max_pbo": bar.max_pbo,
        "refusal": refusal,
    }

"""The trajectory chart: the best and every variant's goal score per iteration, the trial
figures (deflated Sharpe ratio, PBO) after each, and, apart after a dashed line, the
chosen variant's score on the holdout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alphadesk.pipelines.algo.models import HoldoutRecord, TrialStats, VariantRecord

__all__ = ["save_trajectory_chart"]


def save_trajectory_chart(
    records: list[VariantRecord],
    path: Path,
    title: str,
    trials: dict[int, TrialStats | None] | None = None,
    holdout: HoldoutRecord | None = None,
) -> Path:
    """Draw scores (in-sample, out-of-sample, best per iteration), from ``trials`` (by
    iteration) the deflated Sharpe ratio and PBO over the trials so far, and the
    ``holdout`` score in a column of its own; save a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    iterations = sorted({r.iteration for r in records})
    best = [max((r.score for r in records if r.iteration == i), default=0.0) for i in iterations]
    fig, ax = plt.subplots(figsize=(7, 3.6), dpi=100)
    try:
        ax.scatter(
            [r.iteration for r in records],
            [r.in_sample.score for r in records],
            marker="o",
            alpha=0.5,
            label="in-sample score",
        )
        ax.scatter(
            [r.iteration for r in records],
            [r.out_of_sample.score if r.out_of_sample else 0.0 for r in records],
            marker="x",
            alpha=0.7,
            label="out-of-sample score",
        )
        ax.plot(iterations, best, color="black", linewidth=2, label="best (min of both)")
        _trial_lines(ax, trials or {})
        ax.axhline(1.0, color="green", linestyle="--", linewidth=1, label="goal met")
        ax.set(
            xlabel="iteration", ylabel="goal score / probability", ylim=(-0.05, 1.1), title=title
        )
        ax.set_xticks(iterations)
        if holdout is not None and holdout.run is not None:
            _holdout_point(ax, iterations[-1] + 1, iterations, holdout)
        ax.legend(loc="lower right", fontsize=8)
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path)
    finally:
        plt.close(fig)
    return path


def _trial_lines(ax: Any, trials: dict[int, TrialStats | None]) -> None:
    for field, label, style, colour in (
        ("deflated_sharpe", "deflated Sharpe (best)", "-.", "purple"),
        ("pbo", "PBO", ":", "firebrick"),
    ):
        points = [
            (i, getattr(t, field))
            for i, t in sorted(trials.items())
            if t and getattr(t, field) is not None
        ]
        if points:
            xs, ys = zip(*points, strict=True)
            ax.plot(xs, ys, linestyle=style, color=colour, marker=".", linewidth=1.5, label=label)


def _holdout_point(ax: Any, x: int, iterations: list[int], holdout: HoldoutRecord) -> None:
    """The holdout's score after a dashed line: run once, after the search, never fed back."""
    assert holdout.run is not None
    ax.axvline(x - 0.5, color="grey", linestyle="--", linewidth=1)
    ax.scatter(
        [x],
        [holdout.run.score],
        marker="*",
        s=220,
        color="green" if holdout.passed else "firebrick",
        edgecolor="black",
        zorder=3,
        label=f"holdout ({holdout.variant_id}: {'passed' if holdout.passed else 'failed'})",
    )
    ax.set_xticks([*iterations, x], [*map(str, iterations), "holdout"])

"""The strategy lab's Markdown report and the winning strategy as a file."""

from __future__ import annotations

from alphadesk.pipelines.algo.models import (
    AlgoRequest,
    AlgoResult,
    HoldoutRecord,
    PeriodScore,
    TrialBar,
    TrialStats,
    VariantRecord,
)

__all__ = ["render_report", "strategy_file"]

_SHOWN = ("sharpe", "max_drawdown", "annualized_return", "win_rate", "trades")


def strategy_file(request: AlgoRequest, best: VariantRecord) -> str:
    """The variant's code under a comment saying where it came from and how to rerun it."""
    lines = [
        f"# {best.name}: developed by the alphadesk strategy lab for {request.symbol}",
        f"# goal: {request.goal}",
    ]
    for period in (best.in_sample, best.out_of_sample):
        if period is not None:
            lines.append(f"# {_period_line(period)}")
    if best.out_of_sample is not None:
        first, last = best.out_of_sample.start, best.out_of_sample.end
        lines.append(
            f"# rerun: alphadesk backtest strategy.py {request.symbol} --from {first} --to {last}"
        )
    return "\n".join(lines) + "\n" + best.code


def _figure(name: str, value: float | int | None) -> str:
    if value is None:
        return "-"
    if name in ("max_drawdown", "annualized_return", "win_rate"):
        return f"{value:.1%}"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def _period_line(period: PeriodScore) -> str:
    shown = ", ".join(f"{k} {_figure(k, period.metrics.get(k))}" for k in _SHOWN)
    return f"{period.period} {period.start} to {period.end}: {shown}; score {period.score:.2f}"


def _probability(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _trials_section(trials: TrialStats | None, bar: TrialBar | None) -> list[str]:
    """How much the search's best survives its own number of trials, against the bar."""
    if trials is None:
        return []
    need_dsr = f" (SUCCESS needs above {bar.min_deflated_sharpe:.0%})" if bar else ""
    need_pbo = f" (SUCCESS needs below {bar.max_pbo:.0%})" if bar else ""
    out = [
        "",
        "## Trials",
        "",
        f"- {trials.trials} variants tried; best {trials.best_variant or '-'}",
        f"- deflated Sharpe ratio (validation, {trials.trials} trials): "
        f"{_probability(trials.deflated_sharpe)}{need_dsr}",
        f"- probability of backtest overfitting (CSCV over {trials.pbo_trials} variants' "
        f"returns): {_probability(trials.pbo)}{need_pbo}",
    ]
    return out + [f"- {note}" for note in trials.notes]


def _holdout_section(holdout: HoldoutRecord | None) -> list[str]:
    """The chosen strategy on the sealed final period, reported as it came out."""
    if holdout is None:
        return []
    if holdout.run is None:
        why = holdout.reason or "no strategy"
        return ["", "## Holdout", "", f"- {holdout.start} to {holdout.end}: not run ({why})"]
    verdict = "**passed**" if holdout.passed else "**failed**"
    unmet = f" (unmet: {', '.join(holdout.run.unmet)})" if holdout.run.unmet else ""
    return [
        "",
        "## Holdout",
        "",
        f"- {holdout.variant_id}, run once after the search chose it: {verdict}{unmet}",
        f"- {_period_line(holdout.run)}",
        "- sealed during the search: no prompt, lesson or experiment line of the loop saw it",
    ]


def render_report(result: AlgoResult) -> str:
    """The lab's decision, the best variant, every iteration and every variant."""
    out = [
        f"# Strategy lab: {result.symbol}",
        "",
        f"**Goal:** {result.goal} ({'; '.join(result.criteria)})",
        "",
        f"**Decision: {result.decision}**: {result.reason}",
    ]
    if result.in_sample and result.out_of_sample:
        sealed = (
            f"; holdout {result.holdout_period[0]} to {result.holdout_period[1]}"
            if result.holdout_period
            else ""
        )
        out.append(
            f"\nSearch (in-sample) {result.in_sample[0]} to {result.in_sample[1]}; validation "
            f"(out-of-sample) {result.out_of_sample[0]} to {result.out_of_sample[1]}{sealed}."
        )
    if result.brief is not None:
        out += ["", "## Research brief", "", result.brief.summary]
        out += [f"- gap: {gap}" for gap in result.brief.gaps]
    if result.best is not None:
        out += ["", f"## Best variant: {result.best.variant_id} {result.best.name}", ""]
        for period in (result.best.in_sample, result.best.out_of_sample):
            if period is not None:
                out.append(f"- {_period_line(period)}")
        if result.strategy_file:
            out.append(f"- saved as `{result.strategy_file}`")
    out += _holdout_section(result.holdout)
    out += _trials_section(result.trials, result.trial_bar)
    out += [
        "",
        "## Iterations",
        "",
        "| # | best | score | trials | deflated Sharpe | PBO | decision | why |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for entry in result.iterations:
        why = entry.gate.reasoning.replace("|", "/")[:120]
        t = entry.trials
        figures = (
            f"{t.trials} | {_probability(t.deflated_sharpe)} | {_probability(t.pbo)}"
            if t
            else "- | - | -"
        )
        out.append(
            f"| {entry.iteration} | {entry.best_variant} | {entry.best_score:.2f} | {figures} | "
            f"{entry.gate.decision} | {why} |"
        )
    failed = [e for e in result.iterations if e.failure is not None]
    if failed:
        out += ["", "## Failure analyses", ""]
        out += [
            f"- iteration {e.iteration}: {e.failure.classification}: {e.failure.root_cause}"
            for e in failed
            if e.failure is not None
        ]
    out += [
        "",
        "## Variants",
        "",
        "| id | variant | in-sample | out-of-sample | status |",
        "|---|---|---|---|---|",
    ]
    for v in result.variants:
        oos = f"{v.out_of_sample.score:.2f}" if v.out_of_sample else "-"
        status = v.error[:60] if v.error else ("passed" if v.passed else "failed the goal")
        out.append(f"| {v.variant_id} | {v.name} | {v.in_sample.score:.2f} | {oos} | {status} |")
    if result.data_missing:
        out += ["", "## Data missing", ""] + [f"- {m}" for m in result.data_missing[:20]]
    return "\n".join(out) + "\n"

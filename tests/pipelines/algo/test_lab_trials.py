"""The lab's trial figures: every variant counts, the best one's deflated Sharpe, PBO over
the variants' full-window returns, and the experiment lines that carry them."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from alphadesk.analytics.overfitting import (
    deflated_sharpe_ratio,
    probability_of_backtest_overfitting,
)
from alphadesk.pipelines.algo.charts import save_trajectory_chart
from alphadesk.pipelines.algo.models import PeriodScore, VariantRecord
from alphadesk.pipelines.algo.tracker import ExperimentTracker
from alphadesk.pipelines.algo.trials import trial_stats


def _period(which: str, returns: list[float], status: str = "completed") -> PeriodScore:
    return PeriodScore(
        period=which,  # type: ignore[arg-type]
        start=date(2010, 1, 4),
        end=date(2012, 12, 31),
        status=status,  # type: ignore[arg-type]
        returns=returns,
    )


def _variant(n: int, inside: np.ndarray, outside: np.ndarray, score: float) -> VariantRecord:
    return VariantRecord(
        iteration=1 + n // 4,
        variant_id=f"v{n}",
        name=f"variant {n}",
        template=None,
        approach="noise",
        parameters={},
        code_hash=str(n),
        code="",
        in_sample=_period("in_sample", [float(x) for x in inside]),
        out_of_sample=_period("out_of_sample", [float(x) for x in outside]),
        score=score,
    )


def _crashed(n: int) -> VariantRecord:
    return VariantRecord(
        iteration=1,
        variant_id=f"x{n}",
        name="crashed",
        template=None,
        approach="-",
        parameters={},
        code_hash=f"x{n}",
        code="",
        in_sample=_period("in_sample", [], status="crashed"),
    )


def _oos(record: VariantRecord) -> list[float]:
    assert record.out_of_sample is not None
    return record.out_of_sample.returns


def _noise_variants(count: int, seed: int = 0) -> list[VariantRecord]:
    rng = np.random.default_rng(seed)
    return [
        _variant(n, rng.normal(0, 0.01, 400), rng.normal(0, 0.01, 200), score=n / count)
        for n in range(count)
    ]


def test_the_figures_are_the_analytics_over_every_trial() -> None:
    variants = _noise_variants(8)
    tried = [*variants, _crashed(1), _crashed(2)]
    best = variants[-1]
    stats = trial_stats(tried, best)
    assert stats.trials == 10  # the crashed variants are trials too
    assert stats.best_variant == best.variant_id
    sharpes = [np.mean(_oos(v)) / np.std(_oos(v), ddof=1) for v in variants]
    expected = deflated_sharpe_ratio(_oos(best), 10, float(np.var(sharpes, ddof=1)))
    assert stats.deflated_sharpe == pytest.approx(expected.probability, abs=5e-5)
    table = np.column_stack([v.in_sample.returns + _oos(v) for v in variants])
    assert stats.pbo == pytest.approx(
        probability_of_backtest_overfitting(table).probability, abs=5e-5
    )
    assert stats.pbo_trials == 8
    assert stats.notes == []


def test_a_real_edge_survives_and_noise_does_not() -> None:
    rng = np.random.default_rng(5)
    variants = _noise_variants(12, seed=5)
    edge = _variant(99, rng.normal(0.004, 0.01, 400), rng.normal(0.004, 0.01, 200), 1.0)
    strong = trial_stats([*variants, edge], edge)
    lucky = trial_stats(variants, max(variants, key=lambda v: np.mean(_oos(v))))
    assert strong.deflated_sharpe is not None and strong.deflated_sharpe > 0.95
    assert strong.pbo is not None and strong.pbo < 0.1
    assert lucky.deflated_sharpe is not None and lucky.deflated_sharpe < 0.95


def test_too_little_to_compute_is_said_not_guessed() -> None:
    short = _variant(0, np.full(10, 0.001) + np.arange(10) * 1e-4, np.arange(10) * 1e-4, 0.5)
    stats = trial_stats([short, _crashed(1)], short)
    assert stats.trials == 2
    assert stats.deflated_sharpe is None and stats.pbo is None
    assert any("needs at least 30 returns" in n for n in stats.notes)
    assert any("needs at least 2 trials" in n for n in stats.notes)
    nothing = trial_stats([_crashed(1)], None)
    assert nothing.notes == ["no PBO: no variant completed both periods"]


def test_each_experiment_line_carries_the_cumulative_figures(tmp_path: Path) -> None:
    variants = _noise_variants(8)
    tracker = ExperimentTracker(tmp_path / "experiments.jsonl")
    first = trial_stats(variants[:4], variants[3])
    tracker.append(variants[:4], first)
    tracker.append(variants[4:], trial_stats(variants, variants[7]))
    lines = [json.loads(line) for line in (tmp_path / "experiments.jsonl").read_text().splitlines()]
    assert [line["trials"] for line in lines] == [4] * 4 + [8] * 4
    assert lines[0]["deflated_sharpe"] == first.deflated_sharpe
    assert lines[0]["candidate"] == "v3" and lines[-1]["candidate"] == "v7"
    assert all("returns" not in key for key in lines[0])  # the series stay out of the file


def test_the_trajectory_chart_draws_the_trial_figures(tmp_path: Path) -> None:
    variants = _noise_variants(8)
    by_iteration = {
        1: trial_stats(variants[:4], variants[3]),
        2: trial_stats(variants, variants[7]),
    }
    plain = save_trajectory_chart(variants, tmp_path / "plain.png", "noise")
    drawn = save_trajectory_chart(variants, tmp_path / "trials.png", "noise", by_iteration)
    assert drawn.read_bytes().startswith(b"\x89PNG")
    assert drawn.read_bytes() != plain.read_bytes()
    # an iteration without figures leaves a gap, not a zero
    gaps = save_trajectory_chart(variants, tmp_path / "gaps.png", "noise", {1: None, 2: None})
    assert gaps.read_bytes() == plain.read_bytes()


def test_the_bar_refuses_low_figures_and_figures_it_cannot_see() -> None:
    from alphadesk.pipelines.algo.models import TrialBar, TrialStats
    from alphadesk.pipelines.algo.trials import trial_refusal

    bar = TrialBar(min_deflated_sharpe=0.95, max_pbo=0.5)
    good = TrialStats(trials=6, best_variant="v1", deflated_sharpe=0.97, pbo=0.2)
    assert trial_refusal(good, bar) is None
    edge = good.model_copy(update={"deflated_sharpe": 0.95, "pbo": 0.5})  # not above, not below
    said = trial_refusal(edge, bar)
    assert said is not None and "95.0% after 6 trials is not above 95%" in said
    assert "overfitting 50.0% is not below 50%" in said
    unseen = TrialStats(trials=1, best_variant="v1", notes=["no PBO: needs at least 2 trials"])
    said = trial_refusal(unseen, bar)
    assert said is not None and "no PBO could be computed" in said and "2 trials" in said
